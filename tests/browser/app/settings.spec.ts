// User settings (/app/-/settings): profile, password, language, personal access tokens.
import { errorLine, expect, messages, test } from "../fixtures";

test("profile, password and language", async ({ page, en, user }) => {
  await page.goto("/app/");
  await page.getByTestId("user-menu").click();
  await page.getByRole("menuitem", { name: en["nav.settings"] }).click();
  await expect(page).toHaveURL(/\/app\/-\/settings$/);

  // Profile: a new name and email.
  const profile = page.getByRole("region", { name: en["settings.profile"] });
  await profile.getByLabel(en["auth.field.name"]!).fill("Renamed Person");
  const email = user.email.replace("@", "+new@");
  await profile.getByLabel(en["auth.field.email"]!).fill(email);
  // A new email asks for the password: a wrong one is refused, the right one saves.
  const password = profile.getByLabel(en["settings.email_password"]!);
  await expect(password).toBeVisible();
  await password.fill("not my password");
  await profile.getByRole("button", { name: en["settings.save_profile"] }).click();
  await expect(errorLine(profile).message).toHaveText(en["settings.wrong_current_password"]!);
  await password.fill(user.password);
  await profile.getByRole("button", { name: en["settings.save_profile"] }).click();
  await expect(profile.getByRole("status")).toHaveText(en["settings.profile_saved"]!);
  const me = await (await page.request.get("/api/me")).json();
  expect([me.name, me.email]).toEqual(["Renamed Person", email]);
  await expect(password).toHaveCount(0);
  await page.getByTestId("user-menu").click();
  await expect(page.getByRole("menu")).toContainText("Renamed Person");
  await page.keyboard.press("Escape");

  // Password: a wrong current one is refused with the message; the right one works.
  const pw = page.getByRole("region", { name: en["settings.change_password"] });
  await pw.getByLabel(en["settings.current_password"]!).fill("not my password");
  await pw.getByLabel(en["settings.new_password"]!).fill("a brand new password");
  await pw.getByRole("button", { name: en["settings.change_password"] }).click();
  await expect(errorLine(pw).message).toHaveText(en["settings.wrong_current_password"]!);
  await pw.getByLabel(en["settings.current_password"]!).fill(user.password);
  await pw.getByRole("button", { name: en["settings.change_password"] }).click();
  await expect(pw.getByRole("status")).toHaveText(en["settings.password_changed"]!);
  await expect(pw.getByRole("alert")).toHaveCount(0);
  await expect(pw.getByLabel(en["settings.current_password"]!)).toHaveValue("");
  const login = await page.request.post("/api/auth/login", { data: { email, password: "a brand new password" } });
  expect(login.status()).toBe(200);

  // Language: stored on the user, the screen switches at once.
  const fr = await messages(page.request, "fr");
  await page.locator("#settings-language-select").selectOption("fr");
  await expect(page.getByRole("heading", { name: fr["nav.settings"], level: 1 })).toBeVisible();
  expect((await (await page.request.get("/api/me")).json()).language).toBe("fr");
});

test("personal access tokens: create (shown once, copy), use, revoke", async ({ page, context, en, user }) => {
  void user;
  await context.grantPermissions(["clipboard-read", "clipboard-write"]);
  await page.goto("/app/-/settings");
  const tokens = page.getByRole("region", { name: en["settings.tokens.title"] });
  await expect(tokens.getByText(en["settings.tokens.empty"]!)).toBeVisible();

  await tokens.getByLabel(en["settings.tokens.name"]!).fill("CLI script");
  await tokens.getByRole("button", { name: en["settings.tokens.create"] }).click();
  const shown = page.getByTestId("new-token");
  await expect(shown).toContainText(en["settings.tokens.shown_once"]!);
  const secret = await shown.getByRole("textbox").inputValue();
  expect(secret).toMatch(/^svc_[A-Za-z0-9]{32,}$/);
  await shown.getByRole("button", { name: en["common.copy"] }).click();
  await expect(shown.getByRole("button", { name: en["common.copied"] })).toBeVisible();
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secret);

  const row = page.getByTestId("token-list").getByRole("row", { name: /CLI script/ });
  await expect(row).toContainText(en["settings.tokens.never_used"]!);

  // Used once through the API, then the list tells when.
  const api = await page.request.get("/api/me", { headers: { Authorization: `Bearer ${secret}` } });
  expect(api.status()).toBe(200);
  await page.reload();
  await expect(page.getByTestId("new-token")).toHaveCount(0); // never shown again
  await expect(row).not.toContainText(en["settings.tokens.never_used"]!);

  // Revoke, after a confirmation; the token fails at once.
  await row.getByRole("button", { name: `${en["settings.tokens.revoke"]}: CLI script` }).click();
  const confirm = page.getByRole("dialog", { name: en["common.confirm"] });
  await expect(confirm).toContainText("CLI script");
  await confirm.getByRole("button", { name: en["settings.tokens.revoke"] }).click();
  await expect(page.getByTestId("token-list")).toHaveCount(0);
  await expect(tokens.getByText(en["settings.tokens.empty"]!)).toBeVisible();
  const after = await page.request.get("/api/me", { headers: { Authorization: `Bearer ${secret}` } });
  expect(after.status()).toBe(401);
});

test("a password change can revoke every personal access token", async ({ page, en, user }) => {
  const made = await page.request.post("/api/tokens", { data: { name: "laptop" } });
  expect(made.status()).toBe(201);
  const secret = ((await made.json()) as { token: string }).token;
  await page.goto("/app/-/settings");
  await expect(page.getByTestId("token-list").getByRole("row", { name: /laptop/ })).toBeVisible();
  const pw = page.getByRole("region", { name: en["settings.change_password"] });
  await pw.getByLabel(en["settings.current_password"]!).fill(user.password);
  await pw.getByLabel(en["settings.new_password"]!).fill("a brand new password");
  await pw.getByLabel(en["settings.revoke_tokens"]!).check();
  await pw.getByRole("button", { name: en["settings.change_password"] }).click();
  await expect(pw.getByRole("status")).toHaveText(en["settings.password_changed_tokens_revoked"]!);
  await expect(pw.getByLabel(en["settings.revoke_tokens"]!)).not.toBeChecked();
  // The list says so at once, and the token fails.
  await expect(page.getByTestId("token-list")).toHaveCount(0);
  const after = await page.request.get("/api/me", { headers: { Authorization: `Bearer ${secret}` } });
  expect(after.status()).toBe(401);
});
