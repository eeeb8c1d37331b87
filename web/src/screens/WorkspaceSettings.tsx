// The current workspace's settings at /app/-/workspace: export as a zip, rename, members,
// invitations (a link to pass on, pending ones listed and revocable), webhooks and their deliveries, delete (typed confirmation). Which controls show is the
// server's word: the workspace's `can` (GET /api/workspaces), not a copy of its rule
// here; a member who may not manage them sees the read-only list of members.
import { useEffect, useState } from "preact/hooks";
import {
  api,
  ApiError,
  EVENT_KINDS,
  type Delivery,
  type Invitation,
  type Member,
  type Webhook,
  type Workspace,
} from "../api";
import { confirmDialog, Dialog } from "../components/Dialog";
import { DialogActions, Feedback, Field, Notice, RowAction, ShownOnce, useAction } from "../components/Form";
import { formatDate, t, useI18n } from "../i18n";
import { webhookMaxAttempts } from "../limits";
import { appHref, navigate } from "../router";
import { currentWorkspace, switchWorkspace, user, workspaces } from "../session";
import { useStore } from "../store";

function eventLabel(kind: string): string {
  return t(`settings.webhooks.event.${kind.replace(".", "_")}`);
}

function Rename({ ws }: { ws: Workspace }) {
  const [name, setName] = useState(ws.name);
  const action = useAction();
  async function submit(e: Event) {
    e.preventDefault();
    await action.run(async () => {
      const updated = await api.updateWorkspace(ws.slug, name.trim());
      workspaces.set(workspaces.get().map((w) => (w.slug === ws.slug ? { ...w, name: updated.name } : w)));
    }, t("workspace.renamed"));
  }
  return (
    <section class="card" aria-labelledby="ws-rename">
      <h2 id="ws-rename">{t("workspace.rename")}</h2>
      <form class="inline-form" onSubmit={submit}>
        <Field label={t("workspace.name")} name="workspace-name" required value={name} onValue={setName} />
        <button type="submit" class="primary" disabled={action.busy || !name.trim() || name.trim() === ws.name}>
          {t("workspace.rename")}
        </button>
      </form>
      <Feedback action={action} />
    </section>
  );
}

/** The workspace as a zip of markdown files (any member; GET /api/workspaces/{slug}/export). */
function Export({ ws }: { ws: Workspace }) {
  return (
    <section class="card" aria-labelledby="ws-export">
      <h2 id="ws-export">{t("workspace.export")}</h2>
      <p class="muted">{t("workspace.export_hint")}</p>
      <a class="button" href={`/api/workspaces/${encodeURIComponent(ws.slug)}/export`} download={`${ws.slug}.zip`}>
        {t("workspace.export_zip")}
      </a>
    </section>
  );
}

function Members({ ws, manage }: { ws: Workspace; manage: boolean }) {
  const me = useStore(user);
  const [items, setItems] = useState<Member[] | null>(null);
  const [email, setEmail] = useState("");
  const [role, setRole] = useState<Member["role"]>("member");
  const action = useAction();
  /** What the last add or removal did, named ("Added Alice as a member."): the list alone
   *  changes quietly, often below the fold. */
  const [done, setDone] = useState("");
  const load = async () => setItems((await api.members(ws.slug)).items);
  useEffect(() => void action.run(load), [ws.slug]);

  async function add(e: Event) {
    e.preventDefault();
    const who = email.trim();
    let unknown = false;
    setDone("");
    await action.run(async () => {
      const added = await api.addMember(ws.slug, who, role).catch((err: unknown) => {
        unknown = err instanceof ApiError && err.code === "user_not_found";
        throw err;
      });
      setEmail("");
      setDone(t(`workspace.member_added_${added.role}`, { name: added.name || added.email }));
      await load();
    });
    // An unknown email gets the one message that names it.
    if (unknown) action.setError(t("workspace.member_not_found", { email: who }));
  }

  async function remove(m: Member) {
    const ok = await confirmDialog(t("workspace.remove_member_confirm", { name: m.name || m.email }), {
      confirmLabel: t("workspace.remove_member"),
      danger: true,
    });
    if (!ok) return;
    setDone("");
    await action.run(async () => {
      await api.removeMember(ws.slug, m.id);
      setDone(t("workspace.member_removed", { name: m.name || m.email }));
      await load();
    });
  }

  return (
    <section class="card" aria-labelledby="ws-members">
      <h2 id="ws-members">{t("workspace.members")}</h2>
      {manage ? (
        <form class="inline-form" onSubmit={add} data-testid="add-member">
          <Field label={t("workspace.add_member_email")} type="email" name="member-email" required value={email} onValue={setEmail} />
          <label>
            <span>{t("workspace.role")}</span>
            <select name="member-role" value={role} onChange={(e) => setRole(e.currentTarget.value as Member["role"])}>
              <option value="member">{t("workspace.role.member")}</option>
              <option value="owner">{t("workspace.role.owner")}</option>
            </select>
          </label>
          <button type="submit" class="primary" disabled={action.busy || !email.trim()}>
            {t("workspace.add_member")}
          </button>
        </form>
      ) : (
        <p class="muted" data-testid="members-read-only">
          {t("workspace.owners_only")}
        </p>
      )}
      <Feedback action={action} />
      {!action.error && <Notice text={done} />}
      {items === null && !action.error && <p class="muted">{t("common.loading")}</p>}
      {items && (
        <table class="list-table" data-testid="member-list">
          <thead>
            <tr>
              <th>{t("auth.field.name")}</th>
              <th>{t("auth.field.email")}</th>
              <th>{t("workspace.role")}</th>
              {manage && <th />}
            </tr>
          </thead>
          <tbody>
            {items.map((m) => (
              <tr key={m.id}>
                <td>{m.name}</td>
                <td>{m.email}</td>
                <td>{t(`workspace.role.${m.role}`)}</td>
                {manage &&
                  (m.id !== me?.id ? (
                    <RowAction label={t("workspace.remove_member")} name={m.email} onClick={() => void remove(m)} />
                  ) : (
                    <td />
                  ))}
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

/** Inviting people who may have no account yet: Cairn sends no mail, so an invitation is
 *  a link (shown once) for the owner to pass on; pending ones are listed and revocable. */
function Invitations({ ws }: { ws: Workspace }) {
  const [items, setItems] = useState<Invitation[] | null>(null);
  const [email, setEmail] = useState("");
  const [role, setRole] = useState<Member["role"]>("member");
  const [link, setLink] = useState<{ email: string; link: string } | null>(null);
  const action = useAction();
  const load = async () => setItems((await api.invitations(ws.slug)).items);
  useEffect(() => void action.run(load), [ws.slug]);

  async function invite(e: Event) {
    e.preventDefault();
    const who = email.trim();
    setLink(null);
    await action.run(async () => {
      const made = await api.invite(ws.slug, who, role);
      setEmail("");
      setLink({ email: made.email, link: made.link });
      await load();
    });
  }

  async function revoke(inv: Invitation) {
    const ok = await confirmDialog(t("invitation.revoke_confirm", { email: inv.email }), {
      confirmLabel: t("invitation.revoke"),
      danger: true,
    });
    if (!ok) return;
    setLink(null);
    await action.run(async () => {
      await api.revokeInvitation(ws.slug, inv.id);
      await load();
    }, t("invitation.revoked", { email: inv.email }));
  }

  return (
    <section class="card" aria-labelledby="ws-invitations">
      <h2 id="ws-invitations">{t("invitation.heading")}</h2>
      <p class="muted">{t("invitation.explain")}</p>
      <form class="inline-form" onSubmit={invite} data-testid="invite">
        <Field label={t("auth.field.email")} type="email" name="invite-email" required value={email} onValue={setEmail} />
        <label>
          <span>{t("workspace.role")}</span>
          <select name="invite-role" value={role} onChange={(e) => setRole(e.currentTarget.value as Member["role"])}>
            <option value="member">{t("workspace.role.member")}</option>
            <option value="owner">{t("workspace.role.owner")}</option>
          </select>
        </label>
        <button type="submit" class="primary" disabled={action.busy || !email.trim()}>
          {t("invitation.create")}
        </button>
      </form>
      {link && <ShownOnce value={link.link} warning={t("invitation.link_once", { email: link.email })} testId="invitation-link" />}
      <Feedback action={action} />
      {items && items.length > 0 && (
        <table class="list-table" data-testid="invitation-list">
          <thead>
            <tr>
              <th>{t("auth.field.email")}</th>
              <th>{t("workspace.role")}</th>
              <th>{t("invitation.expires")}</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {items.map((inv) => (
              <tr key={inv.id}>
                <td>{inv.email}</td>
                <td>{t(`workspace.role.${inv.role}`)}</td>
                <td>{inv.expired ? t("invitation.expired") : formatDate(inv.expires_at)}</td>
                <RowAction label={t("invitation.revoke")} name={inv.email} onClick={() => void revoke(inv)} />
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

function Deliveries({ hook }: { hook: Webhook }) {
  const [items, setItems] = useState<Delivery[] | null>(null);
  const action = useAction();
  const load = () => action.run(async () => setItems((await api.deliveries(hook.id)).items));
  useEffect(() => void load(), [hook.id]);
  return (
    <div class="deliveries" data-testid={`deliveries-${hook.id}`}>
      <div class="editor-bar">
        <h3>{t("settings.webhooks.deliveries")}</h3>
        <button type="button" class="small" disabled={action.busy} onClick={() => void load()}>
          {t("common.refresh")}
        </button>
      </div>
      <Feedback action={action} />
      {items === null && !action.error && <p class="muted">{t("common.loading")}</p>}
      {items && items.length === 0 && <p class="muted">{t("settings.webhooks.no_deliveries")}</p>}
      {items && items.length > 0 && (
        <table class="list-table">
          <thead>
            <tr>
              <th>{t("settings.webhooks.event")}</th>
              <th>{t("settings.webhooks.status")}</th>
              <th>{t("settings.webhooks.attempts")}</th>
              <th>{t("settings.webhooks.last_response")}</th>
              <th>{t("settings.created")}</th>
              <th>{t("settings.webhooks.delivered_or_next")}</th>
            </tr>
          </thead>
          <tbody>
            {items.map((d) => (
              <tr key={d.id} data-status={d.status}>
                <td>{eventLabel(d.event)}</td>
                <td>
                  <span class={`badge ${d.status}`}>{t(`settings.webhooks.status.${d.status}`)}</span>
                </td>
                <td>{t("settings.webhooks.attempt", { attempt: d.attempts, max: webhookMaxAttempts() ?? "…" })}</td>
                <td title={d.error ?? undefined}>
                  {d.response_status != null ? t("settings.webhooks.response_code", { code: d.response_status }) : d.error ? t("settings.webhooks.no_response") : "—"}
                </td>
                <td>{formatDate(d.created_at)}</td>
                <td>
                  {d.delivered_at
                    ? formatDate(d.delivered_at)
                    : d.next_attempt_at && d.status !== "failed"
                      ? t("settings.webhooks.next_attempt", { date: formatDate(d.next_attempt_at) })
                      : "—"}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}

function Webhooks({ ws }: { ws: Workspace }) {
  const [items, setItems] = useState<Webhook[] | null>(null);
  const [url, setUrl] = useState("");
  const [events, setEvents] = useState<string[]>([...EVENT_KINDS]);
  const [secret, setSecret] = useState("");
  const [open, setOpen] = useState<number | null>(null);
  const action = useAction();
  const load = async () => setItems((await api.webhooks()).items);
  useEffect(() => void action.run(load), [ws.slug]);

  async function create(e: Event) {
    e.preventDefault();
    setSecret("");
    await action.run(async () => {
      const hook = await api.createWebhook(url.trim(), events);
      setSecret(hook.secret);
      setUrl("");
      await load();
    });
  }

  async function remove(hook: Webhook) {
    const ok = await confirmDialog(`${t("settings.webhooks.delete_confirm")} ${hook.url}`, { confirmLabel: t("common.delete"), danger: true });
    if (ok) await action.run(async () => (await api.deleteWebhook(hook.id), setSecret(""), await load()));
  }

  const toggle = (kind: string, on: boolean) => setEvents(on ? [...events, kind] : events.filter((k) => k !== kind));

  return (
    <section class="card" aria-labelledby="ws-webhooks">
      <h2 id="ws-webhooks">{t("settings.webhooks.title")}</h2>
      <form class="form" onSubmit={create} data-testid="add-webhook">
        <Field
          label={t("settings.webhooks.url")}
          type="url"
          name="webhook-url"
          placeholder="https://example.com/hook"
          required
          value={url}
          onValue={setUrl}
        />
        <fieldset class="checks">
          <legend>{t("settings.webhooks.events")}</legend>
          {EVENT_KINDS.map((kind) => (
            <label key={kind}>
              <input type="checkbox" checked={events.includes(kind)} onChange={(e) => toggle(kind, e.currentTarget.checked)} />
              <span>{eventLabel(kind)}</span>
            </label>
          ))}
        </fieldset>
        <div>
          <button type="submit" class="primary" disabled={action.busy || !url.trim() || events.length === 0}>
            {t("settings.webhooks.create")}
          </button>
        </div>
      </form>
      <p class="hint">{t("settings.webhooks.secret_hint")}</p>
      {secret && <ShownOnce value={secret} warning={t("settings.webhooks.secret_shown_once")} testId="new-webhook-secret" />}
      <Feedback action={action} />
      {items === null && !action.error && <p class="muted">{t("common.loading")}</p>}
      {items && items.length === 0 && <p class="muted">{t("settings.webhooks.empty")}</p>}
      {items && items.length > 0 && (
        <ul class="webhooks" data-testid="webhook-list">
          {items.map((h) => (
            <li key={h.id} class="webhook">
              <div class="webhook-head">
                <code class="webhook-url">{h.url}</code>
                <span class="muted">{h.events.map(eventLabel).join(", ")}</span>
                <span class="muted">{formatDate(h.created_at)}</span>
                <div class="row-actions">
                  <button type="button" class="small" aria-expanded={open === h.id} onClick={() => setOpen(open === h.id ? null : h.id)}>
                    {t("settings.webhooks.deliveries")}
                  </button>
                  <button type="button" class="small" onClick={() => void remove(h)} aria-label={`${t("common.delete")}: ${h.url}`}>
                    {t("common.delete")}
                  </button>
                </div>
              </div>
              {open === h.id && <Deliveries hook={h} />}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

function DeleteWorkspace({ ws }: { ws: Workspace }) {
  const [asking, setAsking] = useState(false);
  const [typed, setTyped] = useState("");
  const action = useAction();
  async function submit(e: Event) {
    e.preventDefault();
    if (typed !== ws.slug) return;
    const ok = await action.run(async () => {
      await api.deleteWorkspace(ws.slug);
      const left = (await api.workspaces()).items;
      workspaces.set(left);
      setAsking(false);
      if (left[0]) await switchWorkspace(left[0].slug);
      else await navigate(appHref(""), { force: true });
    });
    if (!ok) setTyped("");
  }
  return (
    <section class="card danger-zone" aria-labelledby="ws-delete">
      <h2 id="ws-delete">{t("workspace.delete")}</h2>
      <p class="muted">{t("workspace.delete_hint")}</p>
      <button type="button" class="danger" onClick={() => setAsking(true)}>
        {t("workspace.delete")}
      </button>
      {asking && (
        <Dialog title={t("workspace.delete")} onClose={() => setAsking(false)}>
          <form class="form" onSubmit={submit}>
            <p class="confirm-message">{t("workspace.delete_confirm", { name: ws.name })}</p>
            <Field
              label={t("workspace.delete_type_slug", { slug: ws.slug })}
              name="confirm-slug"
              autoComplete="off"
              value={typed}
              onValue={setTyped}
            />
            <Feedback action={action} />
            <DialogActions onCancel={() => setAsking(false)} submit={t("workspace.delete")} danger disabled={action.busy || typed !== ws.slug} />
          </form>
        </Dialog>
      )}
    </section>
  );
}

export function WorkspaceSettings() {
  useI18n();
  const slug = useStore(currentWorkspace);
  const ws = useStore(workspaces).find((w) => w.slug === slug);
  useEffect(() => {
    document.title = t("workspace.settings");
    // The list is read again on opening: its `can` is what this caller may do now (a
    // role may have changed since sign-in). A failure keeps the copy already held.
    api.workspaces().then(
      (r) => workspaces.set(r.items),
      () => undefined,
    );
  }, []);
  if (!ws) return <p class="muted pad">{t("common.loading")}</p>;
  const can = ws.can;
  return (
    <div class="settings" key={ws.slug}>
      <h1>{t("workspace.settings")}</h1>
      <p class="muted">
        <strong>{ws.name}</strong> · <code>{ws.slug}</code> · {t(`workspace.role.${ws.role}`)}
      </p>
      <Export ws={ws} />
      {can.rename && <Rename ws={ws} />}
      <Members ws={ws} manage={can.manage_members} />
      {can.manage_members && <Invitations ws={ws} />}
      {can.manage_webhooks && <Webhooks ws={ws} />}
      {can.delete && <DeleteWorkspace ws={ws} />}
    </div>
  );
}
