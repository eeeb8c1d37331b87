// Single sign-on as a person clicks it: the sign-in screen's "Sign in with Test IdP"
// leaves for the identity provider (oidc-provider.mjs, a real OpenID provider), whose
// sign-in form sends the person back signed in; a refusal comes back to the sign-in
// screen with its reason in words.
import { expect, test } from "../fixtures";

const issuer = process.env.CAIRN_OIDC_ISSUER!;

async function throughProvider(page: import("@playwright/test").Page, login: string) {
  await page.getByTestId("sso-button").click();
  await expect(page).toHaveURL(new RegExp("^" + issuer));
  await page.locator('input[name="login"]').fill(login);
  await page.locator('input[name="password"]').fill("any password");
  await page.locator('button[type="submit"]').click();
}

test("a person signs in with the identity provider and lands where they were going", async ({ page, en }) => {
  await page.goto("/app/-/settings");
  await expect(page).toHaveURL(/\/app\/login\?next=/);
  await expect(page.getByTestId("sso-button")).toHaveText(en["auth.sso.button"]!.replace("{name}", "Test IdP"));
  // The password form is still there (OIDC_ONLY is not set).
  await expect(page.getByLabel(en["auth.field.password"]!)).toBeVisible();
  await throughProvider(page, `sso-${Date.now().toString(36)}`);
  await expect(page).toHaveURL(/\/app\/-\/settings$/);
  const me = await (await page.request.get("/api/me")).json();
  expect(me.email).toMatch(/^sso-.*@example\.com$/);
});

test("an email the provider has not verified is refused, with the reason", async ({ page, en }) => {
  await page.goto("/app/login");
  await throughProvider(page, `unverified-${Date.now().toString(36)}`);
  await expect(page).toHaveURL(/\/app\/login\?sso_error=sso_email_unverified/);
  await expect(page.getByRole("alert")).toHaveText(en["auth.sso.error.email_unverified"]!);
  expect((await page.request.get("/api/me")).status()).toBe(401);
});
