// OAuth for agents as a person meets it: an app (registered as an MCP client would, by
// itself) sends the person to the authorization URL; the consent screen names the app
// as it registered itself and says what it may do; Allow sends the browser back to the
// app with a code; the app then shows under "Connected apps", where Disconnect ends it.
import { createHash, randomBytes } from "node:crypto";
import { expect, fmt, test } from "../fixtures";

const CALLBACK = "http://127.0.0.1:49999/callback";

test("the consent screen connects an app, and Connected apps disconnects it", async ({ page, baseURL, en, user }) => {
  const reg = await page.request.post("/api/oauth/register", {
    data: { client_name: "Notebook Agent", redirect_uris: [CALLBACK], token_endpoint_auth_method: "none" },
  });
  expect(reg.status(), await reg.text()).toBe(201);
  const client = await reg.json();
  const verifier = randomBytes(32).toString("base64url");
  const challenge = createHash("sha256").update(verifier).digest("base64url");
  const query = new URLSearchParams({
    response_type: "code",
    client_id: client.client_id,
    redirect_uri: CALLBACK,
    state: "xyz",
    code_challenge: challenge,
    code_challenge_method: "S256",
    resource: `${baseURL}/api/mcp`,
  });
  // The app's own redirect endpoint: it receives the browser with the code.
  let arrived = "";
  await page.route(`${CALLBACK}**`, (route) => {
    arrived = route.request().url();
    return route.fulfill({ contentType: "text/plain", body: "You can close this window." });
  });

  await page.goto(`/api/oauth/authorize?${query}`);
  await expect(page).toHaveURL(/\/app\/-\/authorize\?/);
  await expect(page.getByTestId("consent-client")).toHaveText("Notebook Agent");
  await expect(page.getByTestId("consent")).toContainText(fmt(en["oauth.acts_as"]!, { name: user.name, email: user.email }));
  await page.getByRole("button", { name: en["oauth.allow"] }).click();
  await expect.poll(() => arrived).toContain("code=");
  const back = new URL(arrived);
  expect(back.searchParams.get("state")).toBe("xyz");

  // The app exchanges the code, and calls MCP with the token.
  const token = await page.request.post("/api/oauth/token", {
    form: { grant_type: "authorization_code", code: back.searchParams.get("code")!, redirect_uri: CALLBACK, client_id: client.client_id, code_verifier: verifier },
  });
  expect(token.status(), await token.text()).toBe(200);
  const { access_token } = await token.json();
  const call = () =>
    page.request.post("/api/mcp", {
      headers: { authorization: `Bearer ${access_token}`, accept: "application/json, text/event-stream" },
      data: { jsonrpc: "2.0", id: 1, method: "tools/list" },
    });
  expect((await call()).status()).toBe(200);

  await page.goto("/app/-/settings");
  const apps = page.getByRole("region", { name: en["settings.apps.title"] });
  const row = apps.getByTestId("app-list").getByRole("row", { name: /Notebook Agent/ });
  await expect(row).toBeVisible();
  await row.getByRole("button", { name: `${en["settings.apps.revoke"]}: Notebook Agent` }).click();
  await page.getByRole("dialog", { name: en["common.confirm"] }).getByRole("button", { name: en["settings.apps.revoke"] }).click();
  await expect(apps.getByRole("status")).toHaveText(fmt(en["settings.apps.revoked"]!, { name: "Notebook Agent" }));
  expect((await call()).status()).toBe(401);
});

test("Deny sends the app away with nothing", async ({ page, en, user }) => {
  expect(user.email).toBeTruthy(); // signed in: the consent screen is a signed-in person's
  const client = await (await page.request.post("/api/oauth/register", { data: { client_name: "Pushy App", redirect_uris: [CALLBACK] } })).json();
  let arrived = "";
  await page.route(`${CALLBACK}**`, (route) => {
    arrived = route.request().url();
    return route.fulfill({ body: "ok" });
  });
  const challenge = createHash("sha256").update("v".repeat(50)).digest("base64url");
  await page.goto(
    `/api/oauth/authorize?${new URLSearchParams({ response_type: "code", client_id: client.client_id, redirect_uri: CALLBACK, state: "s", code_challenge: challenge, code_challenge_method: "S256" })}`,
  );
  await page.getByRole("button", { name: en["oauth.deny"] }).click();
  await expect.poll(() => arrived).toContain("error=access_denied");
  expect(arrived).not.toContain("code=");
});
