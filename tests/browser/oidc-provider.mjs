// A real OpenID provider for the single sign-on tests (tests/it/sso.rs): the npm package
// oidc-provider, a certified implementation, on loopback with one confidential client
// (`cairn` / `cairn-secret`) and its own development sign-in form, where any login name
// signs in. Prints one line of JSON, {"issuer": …}, once it listens.
//
// Accounts: the login name `x` is the person with subject `sub-x` and email
// `x@example.com` (a name with an `@` is the email itself), verified unless the name starts
// with `unverified`. `POST /__test/account {login, sub?, email?, email_verified?, name?}`
// changes what a login name stands for (an email changed at the provider, say).
//
// `POST /__test/spoil {how}` spoils the next ID token the token endpoint answers, once:
// `signature` (signed by another key under the same key id), `audience` (issued to another
// client), `expired` (expired ten minutes ago) — as a broken or hostile provider would.
import http from "node:http";
import * as jose from "jose";
import Provider from "oidc-provider";

const server = http.createServer();
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
const issuer = `http://127.0.0.1:${server.address().port}`;

const alg = "RS256";
const signing = await jose.generateKeyPair(alg, { extractable: true });
const jwk = { ...(await jose.exportJWK(signing.privateKey)), kid: "test-key", alg, use: "sig" };
const stranger = await jose.generateKeyPair(alg);

const accounts = new Map();
function person(login) {
  const set = accounts.get(login) ?? {};
  const email = set.email ?? (login.includes("@") ? login : `${login}@example.com`);
  return {
    sub: set.sub ?? `sub-${login}`,
    email,
    email_verified: set.email_verified ?? !login.startsWith("unverified"),
    name: set.name ?? login.replace(/@.*/, ""),
  };
}

const provider = new Provider(issuer, {
  clients: [
    {
      client_id: "cairn",
      client_secret: "cairn-secret",
      redirect_uris: ["http://127.0.0.1/api/auth/oidc/callback"],
      grant_types: ["authorization_code"],
      response_types: ["code"],
    },
  ],
  jwks: { keys: [jwk] },
  cookies: { keys: ["a test provider's cookie key"] },
  claims: { openid: ["sub"], email: ["email", "email_verified"], profile: ["name"] },
  pkce: { required: () => true },
  // The sign-in form's login name is the account id; its claims carry the subject.
  async findAccount(_ctx, login) {
    return { accountId: login, claims: async () => person(login) };
  },
  // The test's people have agreed to share their email and name once and for all: no
  // consent screen between the sign-in form and Cairn.
  async loadExistingGrant(ctx) {
    const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client.clientId, accountId: ctx.oidc.session.accountId });
    grant.addOIDCScope("openid email profile");
    await grant.save();
    return grant;
  },
});
// Cairn listens on a port chosen when its test starts: any loopback port is its callback.
provider.Client.prototype.redirectUriAllowed = function (uri) {
  const url = new URL(uri);
  return url.protocol === "http:" && url.hostname === "127.0.0.1" && url.pathname === "/api/auth/oidc/callback";
};

// Its development pages link a web font; the tests reach nothing outside loopback.
provider.use(async (ctx, next) => {
  await next();
  if (typeof ctx.body === "string") ctx.body = ctx.body.replace(/@import url\(https:\/\/fonts\.googleapis\.com[^)]*\);/g, "");
});

let spoil = null;
provider.use(async (ctx, next) => {
  await next();
  if (ctx.path !== "/token" || !spoil || !ctx.body?.id_token) return;
  const how = spoil;
  spoil = null;
  const claims = jose.decodeJwt(ctx.body.id_token);
  const now = Math.floor(Date.now() / 1000);
  if (how === "audience") claims.aud = "someone-else";
  if (how === "expired") Object.assign(claims, { iat: now - 1200, exp: now - 600 });
  const key = how === "signature" ? stranger.privateKey : signing.privateKey;
  ctx.body.id_token = await new jose.SignJWT(claims).setProtectedHeader({ alg, kid: jwk.kid }).sign(key);
});

const app = provider.callback();

server.on("request", (req, res) => {
  if (!req.url.startsWith("/__test/")) return app(req, res);
  let body = "";
  req.on("data", (chunk) => (body += chunk));
  req.on("end", () => {
    const asked = JSON.parse(body || "{}");
    if (req.url === "/__test/spoil") spoil = asked.how ?? null;
    else if (req.url === "/__test/account") accounts.set(asked.login, asked);
    else return res.writeHead(404).end();
    res.writeHead(204).end();
  });
});

console.log(JSON.stringify({ issuer }));
