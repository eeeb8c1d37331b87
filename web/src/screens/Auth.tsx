// Sign in (/app/login) and register (/app/register). After either, the user goes back
// to where they were going (?next=/app/...). Single sign-on, when the server offers it
// (GET /api/auth/methods), is a button that leaves for the identity provider; a refused
// one comes back here with ?sso_error=<code>, shown as its message.
import { useEffect, useState } from "preact/hooks";
import { api, ApiError, type SignInMethods } from "../api";
import { Field, FormError } from "../components/Form";
import { LanguageSelect } from "../components/LanguageSelect";
import { Logo } from "../components/Logo";
import { codeMessage, failure, type ErrorText } from "../errors";
import { catalogue, loadMessages, t, useI18n } from "../i18n";
import { passwordMinLength } from "../limits";
import { appHref, location } from "../router";
import { signedIn } from "../session";
import { useStore } from "../store";

function withNext(path: string): string {
  const next = location.get().query.get("next");
  return appHref(path, { next: next ?? undefined });
}

export function AuthFrame({ title, children }: { title: string; children: preact.ComponentChildren }) {
  return (
    <main class="auth">
      <div class="auth-card">
        <div class="auth-brand">
          <Logo size={40} />
          <span>{t("app.name")}</span>
        </div>
        <p class="auth-tagline">{t("app.tagline")}</p>
        <h1>{title}</h1>
        {children}
        <LanguageSelect signedIn={false} id="auth-language" />
      </div>
    </main>
  );
}

/** The ways to sign in here: asked once per visit of a sign-in screen. */
export function useSignInMethods(): SignInMethods | null {
  const [methods, setMethods] = useState<SignInMethods | null>(null);
  useEffect(() => {
    api.authMethods().then(setMethods, () => setMethods(null));
  }, []);
  return methods;
}

/** "Sign in with …": a plain link to the server's start of single sign-on, which sends
 *  the browser to the identity provider and, signed in, on to `next`. */
export function SsoButton({ sso, next, invitation }: { sso: NonNullable<SignInMethods["sso"]>; next?: string; invitation?: string }) {
  const query = new URLSearchParams();
  if (next) query.set("next", next);
  if (invitation) query.set("invitation", invitation);
  const href = query.size ? `${sso.start}?${query.toString()}` : sso.start;
  return (
    <a class="button sso-button" href={href} data-testid="sso-button">
      {t("auth.sso.button", { name: sso.name })}
    </a>
  );
}

/** The email and password fields of both forms. */
export function Credentials({
  email,
  setEmail,
  password,
  setPassword,
  register,
}: {
  email: string;
  setEmail: (v: string) => void;
  password: string;
  setPassword: (v: string) => void;
  register: boolean;
}) {
  return (
    <>
      <Field
        label={t("auth.field.email")}
        type="email"
        name="email"
        autoComplete={register ? "email" : "username"}
        required
        value={email}
        onValue={setEmail}
        autoFocus={!register}
      />
      <Field
        label={t("auth.field.password")}
        type="password"
        name="password"
        autoComplete={register ? "new-password" : "current-password"}
        required
        minLength={register ? passwordMinLength() : undefined}
        value={password}
        onValue={setPassword}
        hint={register ? t("auth.password_hint", { min: passwordMinLength() }) : undefined}
      />
    </>
  );
}

export function Login() {
  useI18n();
  const loc = useStore(location);
  const methods = useSignInMethods();
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const ssoError = loc.query.get("sso_error");
  const [error, setError] = useState<ErrorText>(ssoError ? codeMessage(ssoError) : "");
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    document.title = `${t("auth.login.title")}`;
  });

  async function submit(e: Event) {
    e.preventDefault();
    setBusy(true);
    setError("");
    try {
      const u = await api.login(email, password);
      await loadMessages(); // the user's language
      await signedIn(u); // the app then goes on to ?next=
    } catch (err) {
      setError(failure(err));
      setBusy(false);
    }
  }

  const next = loc.query.get("next") ?? undefined;
  // Until the server said, the password form shows (it is there on most instances).
  const passwordOn = methods?.password ?? true;
  return (
    <AuthFrame title={t("auth.login.title")}>
      {methods?.sso && (
        <div class="sso">
          <SsoButton sso={methods.sso} next={next} />
          {passwordOn && <p class="auth-or">{t("auth.sso.or")}</p>}
        </div>
      )}
      {passwordOn ? (
        <form class="form" onSubmit={submit} noValidate>
          <Credentials email={email} setEmail={setEmail} password={password} setPassword={setPassword} register={false} />
          <FormError error={error} />
          <button type="submit" class="primary" disabled={busy}>
            {t("auth.login.submit")}
          </button>
        </form>
      ) : (
        <FormError error={error} />
      )}
      {(methods?.registration ?? true) && (
        <p class="auth-switch">
          {t("auth.login.no_account")} <a href={withNext("register")}>{t("auth.register.submit")}</a>
        </p>
      )}
    </AuthFrame>
  );
}

export function Register() {
  useI18n();
  useStore(location);
  const [name, setName] = useState("");
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const [error, setError] = useState<ErrorText>("");
  const [busy, setBusy] = useState(false);
  const [closed, setClosed] = useState(false);

  useEffect(() => {
    document.title = t("auth.register.title");
  });

  // Whether registration is closed is learnt from the register answer (403
  // registration_closed), which then shows the notice in place of the form. No probe is
  // sent on arrival: on an open instance its answer is an error (400), which the browser
  // logs on every visit, and no answer without an error or a credential tells it
  // (GET /api/system needs a credential).

  async function submit(e: Event) {
    e.preventDefault();
    setBusy(true);
    setError("");
    try {
      const u = await api.register(email, password, name.trim() || undefined);
      // Keep the language the visitor chose here (a new account starts in English).
      const lang = catalogue.get().language;
      if (lang !== u.language) {
        try {
          await api.setLanguage(lang);
          u.language = lang;
        } catch {
          /* keep the server's */
        }
      }
      await signedIn(u); // the app then goes on to ?next=
    } catch (err) {
      if (err instanceof ApiError && err.code === "registration_closed") setClosed(true);
      setError(failure(err));
      setBusy(false);
    }
  }

  return (
    <AuthFrame title={t("auth.register.title")}>
      {closed ? (
        <div class="notice" role="status" data-testid="registration-closed">
          <p>
            <strong>{t("auth.error.registration_closed")}</strong>
          </p>
          <p>{t("auth.register.closed_hint")}</p>
        </div>
      ) : (
        <form class="form" onSubmit={submit} noValidate>
          <Field label={t("auth.field.name")} type="text" name="name" autoComplete="name" value={name} onValue={setName} />
          <Credentials email={email} setEmail={setEmail} password={password} setPassword={setPassword} register={true} />
          <FormError error={error} />
          <button type="submit" class="primary" disabled={busy}>
            {t("auth.register.submit")}
          </button>
        </form>
      )}
      <p class="auth-switch">
        {t("auth.register.have_account")} <a href={withNext("login")}>{t("auth.login.submit")}</a>
      </p>
    </AuthFrame>
  );
}
