// An invitation link, /app/-/invitation#<secret>: what it offers, and the ways to take
// it — join as the account signed in; or, signed out, create an account, sign in (and
// come back here), or sign in through single sign-on. The secret stays after `#`, which
// the browser never sends to a server; the API gets it in a query string or a body.
import { useEffect, useState } from "preact/hooks";
import { api, ApiError, type InvitationOffer } from "../api";
import { Field, FormError, useAction } from "../components/Form";
import { offerText } from "../components/InvitationsForYou";
import { t, useI18n } from "../i18n";
import { appHref, location, navigate } from "../router";
import { signedIn, user } from "../session";
import { useStore } from "../store";
import { AuthFrame, Credentials, SsoButton, useSignInMethods } from "./Auth";

export function Invitation() {
  useI18n();
  const loc = useStore(location);
  const me = useStore(user);
  const methods = useSignInMethods();
  const token = decodeURIComponent(loc.hash.replace(/^#/, ""));
  const [offer, setOffer] = useState<InvitationOffer | null>(null);
  const [missing, setMissing] = useState(false);
  const [name, setName] = useState("");
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const action = useAction();

  useEffect(() => {
    document.title = t("invitation.title");
    if (!token) return setMissing(true);
    void action.run(async () => {
      try {
        const found = await api.invitationByLink(token);
        setOffer(found);
        setEmail((e) => e || found.email);
      } catch (e) {
        if (e instanceof ApiError && e.status === 404) setMissing(true);
        else throw e;
      }
    });
  }, [token]);

  async function joined(workspace: string) {
    await navigate(appHref("@" + workspace), { replace: true, force: true });
  }

  async function join() {
    await action.run(async () => joined((await api.acceptInvitationLink(token)).workspace));
  }

  async function register(e: Event) {
    e.preventDefault();
    if (!offer) return;
    await action.run(async () => {
      const u = await api.registerWithInvitation({ token, email, password, name: name.trim() || undefined });
      await signedIn(u);
      await joined(offer.workspace);
    });
  }

  const here = `/app/-/invitation#${token}`;
  return (
    <AuthFrame title={t("invitation.title")}>
      {missing && (
        <div class="notice" role="status" data-testid="invitation-missing">
          <p>
            <strong>{t("invitation.not_found")}</strong>
          </p>
          <p>{t("invitation.not_found_hint")}</p>
        </div>
      )}
      {offer && (
        <p data-testid="invitation-offer">{offerText(offer)}</p>
      )}
      {offer && me && (
        <div class="form">
          <p class="muted">{t("invitation.signed_in_as", { email: me.email })}</p>
          <button type="button" class="primary" disabled={action.busy} onClick={() => void join()}>
            {t("invitation.join", { workspace: offer.workspace_name })}
          </button>
        </div>
      )}
      {offer && !me && (
        <>
          {methods?.sso && (
            <div class="sso">
              <SsoButton sso={methods.sso} invitation={token} />
              {methods.password && <p class="auth-or">{t("auth.sso.or")}</p>}
            </div>
          )}
          {(methods?.password ?? true) && (
            <form class="form" onSubmit={register} noValidate>
              <Field label={t("auth.field.name")} type="text" name="name" autoComplete="name" value={name} onValue={setName} />
              <Credentials email={email} setEmail={setEmail} password={password} setPassword={setPassword} register={true} />
              <button type="submit" class="primary" disabled={action.busy}>
                {t("invitation.register")}
              </button>
            </form>
          )}
          {(methods?.password ?? true) && (
            <p class="auth-switch">
              {t("auth.register.have_account")}{" "}
              <a href={appHref("login", { next: here })}>{t("invitation.sign_in_to_join")}</a>
            </p>
          )}
        </>
      )}
      <FormError error={missing ? "" : action.error} />
    </AuthFrame>
  );
}
