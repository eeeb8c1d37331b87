// The app header: brand, workspace switcher, search box, user menu.
import { useState } from "preact/hooks";
import { failure } from "../errors";
import { t, useI18n } from "../i18n";
import { appHref, mayLeave } from "../router";
import { createWorkspace, currentWorkspace, signOut, switchWorkspace, user, workspaces } from "../session";
import { useStore } from "../store";
import { theme, toggleTheme } from "../theme";
import { paletteOpen } from "./CommandPalette";
import { Dialog } from "./Dialog";
import { DialogActions, Field, FormError, useAction } from "./Form";
import { LanguageSelect } from "./LanguageSelect";
import { Logo } from "./Logo";
import { Menu, MenuItem } from "./Menu";
import { SearchBox } from "./SearchBox";

function WorkspaceSwitcher() {
  useI18n();
  const list = useStore(workspaces);
  const current = useStore(currentWorkspace);
  const [creating, setCreating] = useState(false);
  const [name, setName] = useState("");
  const action = useAction();
  const currentName = list.find((w) => w.slug === current)?.name ?? current ?? "";

  async function go(slug: string) {
    if (slug === current || !(await mayLeave())) return;
    try {
      await switchWorkspace(slug);
    } catch (err) {
      action.setError(failure(err));
    }
  }

  async function create(e: Event) {
    e.preventDefault();
    await action.run(async () => {
      const ws = await createWorkspace(name.trim());
      setCreating(false);
      setName("");
      await go(ws.slug);
    });
  }

  return (
    <>
      <Menu
        label={
          <>
            <span class="ws-name">{currentName}</span> <span aria-hidden="true">▾</span>
          </>
        }
        buttonClass="ws-button"
        buttonTitle={t("workspace.switch")}
        ariaLabel={`${currentName}, ${t("workspace.switch")}`}
        testId="workspace-switcher"
      >
        {(close) => (
          <>
            <div class="menu-heading">{t("nav.workspaces")}</div>
            {list.map((w) => (
              <button
                type="button"
                role="menuitemradio"
                aria-checked={w.slug === current}
                key={w.slug}
                class="menu-item"
                onClick={() => {
                  close();
                  void go(w.slug);
                }}
              >
                <span>{w.name}</span>
                <small class="muted">{t(`workspace.role.${w.role}`)}</small>
              </button>
            ))}
            <hr />
            <MenuItem close={close} href={appHref("-/workspace")} testId="workspace-settings">
              {t("workspace.settings")}
            </MenuItem>
            <MenuItem close={close} onClick={() => setCreating(true)}>
              + {t("workspace.create")}
            </MenuItem>
          </>
        )}
      </Menu>
      {creating && (
        <Dialog title={t("workspace.create")} onClose={() => setCreating(false)}>
          <form class="form" onSubmit={create}>
            <Field label={t("workspace.name")} name="workspace-name" required value={name} onValue={setName} autoFocus />
            <FormError error={action.error} />
            <DialogActions onCancel={() => setCreating(false)} submit={t("workspace.create")} disabled={action.busy || !name.trim()} />
          </form>
        </Dialog>
      )}
    </>
  );
}

function UserMenu() {
  useI18n();
  const u = useStore(user);
  const th = useStore(theme);
  if (!u) return null;
  return (
    <Menu
      label={<span class="avatar">{(u.name || u.email).slice(0, 1).toUpperCase()}</span>}
      buttonClass="user-button"
      buttonTitle={t("nav.account")}
      testId="user-menu"
      footer={
        <div class="menu-item menu-lang">
          <LanguageSelect signedIn={true} id="user-language" />
        </div>
      }
    >
      {(close) => (
        <>
          <div class="menu-heading">
            <strong>{u.name}</strong>
            <div class="muted">{u.email}</div>
          </div>
          {/* The theme toggle leaves the menu open, to see the result. */}
          <MenuItem close={() => undefined} onClick={toggleTheme} testId="theme-toggle">
            {th === "dark" ? "☀ " + t("theme.light") : "☾ " + t("theme.dark")}
          </MenuItem>
          {(["settings", "insights", "graph", "trash"] as const).map((screen) => (
            <MenuItem key={screen} close={close} href={appHref(`-/${screen}`)}>
              {t(`nav.${screen}`)}
            </MenuItem>
          ))}
          <hr />
          <MenuItem close={close} onClick={() => void signOut()}>
            {t("nav.sign_out")}
          </MenuItem>
        </>
      )}
    </Menu>
  );
}

export function Header({ onToggleSidebar, sidebarOpen }: { onToggleSidebar: () => void; sidebarOpen: boolean }) {
  useI18n();
  return (
    <header class="header">
      <button
        type="button"
        class="icon sidebar-toggle"
        onClick={onToggleSidebar}
        aria-label={t("nav.pages")}
        aria-expanded={sidebarOpen}
        aria-controls="sidebar"
        title={t("nav.pages")}
        data-testid="sidebar-toggle"
      >
        ☰
      </button>
      <a class="brand" href={appHref("")}>
        <Logo size={24} />
        <span>{t("app.name")}</span>
      </a>
      <WorkspaceSwitcher />
      <SearchBox />
      <button
        type="button"
        class="palette-button"
        onClick={() => paletteOpen.set(true)}
        title={`${t("palette.title")} (Ctrl+K)`}
        aria-keyshortcuts="Control+K Meta+K"
      >
        <span class="sr-only">{t("palette.title")} </span>
        <kbd>Ctrl K</kbd>
      </button>
      <UserMenu />
    </header>
  );
}
