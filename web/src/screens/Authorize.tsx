// The consent screen of OAuth for agents, /app/-/authorize?<the authorization request>:
// it names the app as it registered itself, says it will act as the signed-in person in
// all their workspaces through Cairn's MCP server, and has Allow and Deny. Either answer
// sends the browser back to the app's redirect address (with a one-use code, or
// access_denied). A request the server cannot send back comes with ?problem=<code>.
import { useEffect, useState } from "preact/hooks";
import { api, type OAuthRequest } from "../api";
import { FormError, useAction } from "../components/Form";
import { codeMessage } from "../errors";
import { t, useI18n } from "../i18n";
import { location } from "../router";
import { user } from "../session";
import { useStore } from "../store";

type Asked = Awaited<ReturnType<typeof api.oauthConsent>>;

const FIELDS = ["response_type", "client_id", "redirect_uri", "state", "scope", "code_challenge", "code_challenge_method", "resource"] as const;

export function Authorize() {
  useI18n();
  const loc = useStore(location);
  const me = useStore(user);
  const [asked, setAsked] = useState<Asked | null>(null);
  const action = useAction();
  const problem = loc.query.get("problem");
  const request: OAuthRequest = {};
  for (const f of FIELDS) {
    const v = loc.query.get(f);
    if (v !== null) request[f] = v;
  }

  useEffect(() => {
    document.title = t("oauth.title");
    if (!problem) void action.run(async () => setAsked(await api.oauthConsent(request)));
  }, [loc.query.toString()]);

  async function decide(allow: boolean) {
    await action.run(async () => {
      const { redirect } = await api.oauthDecide(request, allow);
      window.location.assign(redirect);
    });
  }

  const host = asked ? new URL(asked.redirect_uri).host || asked.redirect_uri : "";
  return (
    <div class="settings consent" data-testid="consent">
      <h1>{t("oauth.title")}</h1>
      {problem && <FormError error={codeMessage(problem)} />}
      {asked && me && (
        <section class="card">
          <p class="consent-app">
            <strong data-testid="consent-client">{asked.client_name}</strong>
          </p>
          <p>{t("oauth.acts_as", { name: me.name, email: me.email })}</p>
          <p class="muted">{t("oauth.redirect", { host })}</p>
          <p class="muted">{t("oauth.self_named")}</p>
          <div class="actions">
            <button type="button" class="primary" disabled={action.busy} onClick={() => void decide(true)}>
              {t("oauth.allow")}
            </button>
            <button type="button" disabled={action.busy} onClick={() => void decide(false)}>
              {t("oauth.deny")}
            </button>
          </div>
        </section>
      )}
      <FormError error={action.error} />
    </div>
  );
}
