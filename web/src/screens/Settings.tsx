// The user's settings at /app/-/settings: profile, password, language, personal access
// tokens (the secret shown once), how to connect an assistant over MCP, and the apps
// connected by OAuth (each revocable at once).
import { useEffect, useState } from "preact/hooks";
import { api, type OAuthGrant, type TokenInfo } from "../api";
import { confirmDialog } from "../components/Dialog";
import { Feedback, Field, RowAction, ShownOnce, useAction } from "../components/Form";
import { LanguageSelect } from "../components/LanguageSelect";
import { formatDate, t, useI18n } from "../i18n";
import { passwordMinLength, tokenNameMaxLength } from "../limits";
import { user } from "../session";
import { store, useStore } from "../store";

/** Bumped when the account's tokens change elsewhere on this screen (a password change
 *  that revoked them): the token list reads them again. */
const tokensVersion = store(0);
const tokensChanged = () => tokensVersion.set(tokensVersion.get() + 1);

function Profile() {
  const u = useStore(user)!;
  const [name, setName] = useState(u.name);
  const [email, setEmail] = useState(u.email);
  const [password, setPassword] = useState("");
  const action = useAction();
  // A new sign-in email needs the account's password (the server asks for it).
  const newEmail = email.trim().toLowerCase() !== u.email.toLowerCase();
  async function submit(e: Event) {
    e.preventDefault();
    const saved = await action.run(async () => {
      const body: { name?: string; email?: string; current_password?: string } = {};
      if (name.trim() !== u.name) body.name = name.trim();
      if (newEmail) Object.assign(body, { email: email.trim(), current_password: password });
      user.set(await api.updateProfile(body));
    }, t("settings.profile_saved"));
    if (saved) setPassword("");
  }
  return (
    <section class="card" aria-labelledby="settings-profile">
      <h2 id="settings-profile">{t("settings.profile")}</h2>
      <form class="form" onSubmit={submit}>
        <Field label={t("auth.field.name")} name="name" autoComplete="name" value={name} onValue={setName} />
        <Field label={t("auth.field.email")} type="email" name="email" autoComplete="email" required value={email} onValue={setEmail} />
        {newEmail && (
          <Field
            label={t("settings.email_password")}
            type="password"
            name="email-current-password"
            autoComplete="current-password"
            required
            value={password}
            onValue={setPassword}
          />
        )}
        <Feedback action={action} />
        <div>
          <button type="submit" class="primary" disabled={action.busy || (name.trim() === u.name && email.trim() === u.email)}>
            {t("settings.save_profile")}
          </button>
        </div>
      </form>
    </section>
  );
}

function Password() {
  const [current, setCurrent] = useState("");
  const [next, setNext] = useState("");
  // A password changed because it leaked should take the tokens made with it along.
  const [revokeTokens, setRevokeTokens] = useState(false);
  const action = useAction();
  async function submit(e: Event) {
    e.preventDefault();
    const done = revokeTokens ? t("settings.password_changed_tokens_revoked") : t("settings.password_changed");
    if (await action.run(() => api.changePassword(current, next, revokeTokens), done)) {
      setCurrent("");
      setNext("");
      setRevokeTokens(false);
      if (revokeTokens) tokensChanged();
    }
  }
  return (
    <section class="card" aria-labelledby="settings-password">
      <h2 id="settings-password">{t("settings.change_password")}</h2>
      <form class="form" onSubmit={submit}>
        <Field
          label={t("settings.current_password")}
          type="password"
          name="current-password"
          autoComplete="current-password"
          required
          value={current}
          onValue={setCurrent}
        />
        <Field
          label={t("settings.new_password")}
          type="password"
          name="new-password"
          autoComplete="new-password"
          required
          minLength={passwordMinLength()}
          value={next}
          onValue={setNext}
          hint={t("auth.password_hint", { min: passwordMinLength() })}
        />
        <label class="checkbox-field">
          <input
            type="checkbox"
            name="revoke-tokens"
            checked={revokeTokens}
            onChange={(e) => setRevokeTokens(e.currentTarget.checked)}
          />
          <span>{t("settings.revoke_tokens")}</span>
        </label>
        <Feedback action={action} />
        <div>
          <button type="submit" class="primary" disabled={action.busy || !current || !next}>
            {t("settings.change_password")}
          </button>
        </div>
      </form>
    </section>
  );
}

function Tokens() {
  const [items, setItems] = useState<TokenInfo[] | null>(null);
  const [name, setName] = useState("");
  const [created, setCreated] = useState<{ name: string; token: string } | null>(null);
  const action = useAction();
  const load = async () => setItems((await api.tokens()).items);
  const version = useStore(tokensVersion);
  useEffect(() => void action.run(load), [version]);

  async function create(e: Event) {
    e.preventDefault();
    await action.run(async () => {
      const tok = await api.createToken(name.trim());
      setCreated({ name: tok.name, token: tok.token });
      setName("");
      await load();
    });
  }

  async function revoke(tok: TokenInfo) {
    const ok = await confirmDialog(t("settings.tokens.revoke_confirm", { name: tok.name }), {
      confirmLabel: t("settings.tokens.revoke"),
      danger: true,
    });
    if (!ok) return;
    await action.run(async () => {
      await api.revokeToken(tok.id);
      setCreated(null);
      await load();
    }, t("settings.tokens.revoked", { name: tok.name }));
  }

  return (
    <section class="card" aria-labelledby="settings-tokens">
      <h2 id="settings-tokens">{t("settings.tokens.title")}</h2>
      <p class="muted">{t("settings.tokens.description")}</p>
      <form class="inline-form" onSubmit={create}>
        <Field label={t("settings.tokens.name")} name="token-name" required maxLength={tokenNameMaxLength()} value={name} onValue={setName} />
        <button type="submit" class="primary" disabled={action.busy || !name.trim()}>
          {t("settings.tokens.create")}
        </button>
      </form>
      {created && <ShownOnce value={created.token} warning={t("settings.tokens.shown_once")} testId="new-token" />}
      <Feedback action={action} />
      {items === null && !action.error && <p class="muted">{t("common.loading")}</p>}
      {items && items.length === 0 && <p class="muted">{t("settings.tokens.empty")}</p>}
      {items && items.length > 0 && (
        <UsedList
          testId="token-list"
          nameHeader={t("settings.tokens.name")}
          revokeLabel={t("settings.tokens.revoke")}
          rows={items.map((tok) => ({ ...tok, onRevoke: () => void revoke(tok) }))}
        />
      )}
      <h3>{t("settings.assistant.title")}</h3>
      <p class="muted">{t("settings.assistant.description")}</p>
      <p>
        {t("settings.assistant.endpoint")}: <code>{`${window.location.origin}/api/mcp`}</code>
      </p>
    </section>
  );
}

/** A credential per row — a token, a connected app — with when it was made and last
 *  used, and a button to revoke it. */
function UsedList({
  testId,
  nameHeader,
  revokeLabel,
  rows,
}: {
  testId: string;
  nameHeader: string;
  revokeLabel: string;
  rows: { id: number; name: string; created_at: string; last_used_at?: string | null; onRevoke: () => void }[];
}) {
  return (
    <table class="list-table" data-testid={testId}>
      <thead>
        <tr>
          <th>{nameHeader}</th>
          <th>{t("settings.created")}</th>
          <th>{t("settings.tokens.last_used_column")}</th>
          <th />
        </tr>
      </thead>
      <tbody>
        {rows.map((row) => (
          <tr key={row.id}>
            <td>{row.name}</td>
            <td>{formatDate(row.created_at)}</td>
            <td>{row.last_used_at ? formatDate(row.last_used_at) : t("settings.tokens.never_used")}</td>
            <RowAction label={revokeLabel} name={row.name} onClick={row.onRevoke} />
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** Apps connected by OAuth (an assistant that signed in through the consent screen):
 *  when each was allowed and last used; disconnecting ends its tokens at once. */
function ConnectedApps() {
  const [items, setItems] = useState<OAuthGrant[] | null>(null);
  const action = useAction();
  const load = async () => setItems((await api.oauthGrants()).items);
  useEffect(() => void action.run(load), []);

  async function revoke(grant: OAuthGrant) {
    const ok = await confirmDialog(t("settings.apps.revoke_confirm", { name: grant.client_name }), {
      confirmLabel: t("settings.apps.revoke"),
      danger: true,
    });
    if (!ok) return;
    await action.run(async () => {
      await api.revokeOAuthGrant(grant.id);
      await load();
    }, t("settings.apps.revoked", { name: grant.client_name }));
  }

  return (
    <section class="card" aria-labelledby="settings-apps">
      <h2 id="settings-apps">{t("settings.apps.title")}</h2>
      <p class="muted">{t("settings.apps.description")}</p>
      <Feedback action={action} />
      {items && items.length === 0 && <p class="muted">{t("settings.apps.empty")}</p>}
      {items && items.length > 0 && (
        <UsedList
          testId="app-list"
          nameHeader={t("settings.apps.name")}
          revokeLabel={t("settings.apps.revoke")}
          rows={items.map((grant) => ({ ...grant, name: grant.client_name, onRevoke: () => void revoke(grant) }))}
        />
      )}
    </section>
  );
}

export function Settings() {
  useI18n();
  useEffect(() => {
    document.title = t("nav.settings");
  }, []);
  return (
    <div class="settings">
      <h1>{t("nav.settings")}</h1>
      <Profile />
      <Password />
      <section class="card" aria-labelledby="settings-language">
        <h2 id="settings-language">{t("settings.language")}</h2>
        <LanguageSelect signedIn={true} id="settings-language-select" />
      </section>
      <Tokens />
      <ConnectedApps />
    </div>
  );
}
