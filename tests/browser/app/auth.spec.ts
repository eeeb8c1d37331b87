// Screen 1: sign in, register, sign out; errors from problem+json; deep links after sign-in.
import { createPage, errorLine, expect, fmt, pageUrl, registerUser, signIn, test, uniqueEmail } from "../fixtures";

test("register through the form, sign out, sign in again", async ({ page, en }) => {
  const email = uniqueEmail("reg");
  await page.goto("/register"); // the server's redirect into the app
  await expect(page).toHaveURL(/\/app\/register$/);
  await expect(page.getByRole("heading", { name: en["auth.register.title"] })).toBeVisible();
  await page.getByLabel(en["auth.field.name"]!).fill("Ada Lovelace");
  await page.getByLabel(en["auth.field.email"]!).fill(email);
  await page.getByLabel(en["auth.field.password"]!).fill("analytical engine");
  await page.getByRole("button", { name: en["auth.register.submit"] }).click();

  // A new account has an empty personal workspace.
  await expect(page.getByTestId("empty-workspace")).toBeVisible();
  await expect(page).toHaveURL(/\/app\/$/);

  await page.getByTestId("user-menu").click();
  await expect(page.getByRole("menu")).toContainText("Ada Lovelace");
  await page.getByRole("menuitem", { name: en["nav.sign_out"] }).click();
  await expect(page).toHaveURL(/\/app\/login/);
  expect((await page.request.get("/api/me")).status()).toBe(401);

  await signIn(page, en, email, "analytical engine");
  await expect(page.getByTestId("empty-workspace")).toBeVisible();
  // The session survives a reload.
  await page.reload();
  await expect(page.getByTestId("empty-workspace")).toBeVisible();
});

test("a wrong password is refused with a message", async ({ page, en }) => {
  const user = await registerUser(page.request);
  await page.request.post("/api/auth/logout");
  await page.goto("/app/login");
  await signIn(page, en, user.email, "not the password");
  await expect(errorLine(page).message).toHaveText(en["auth.error.invalid_credentials"]!);
  // One line: the server's own (English) words are not repeated under the message.
  await expect(errorLine(page).alert).toHaveText(en["auth.error.invalid_credentials"]!);
  await expect(errorLine(page).detail).toHaveCount(0);
  await expect(page).toHaveURL(/\/app\/login/);
  // An unknown email answers the same.
  await signIn(page, en, uniqueEmail("nobody"), "whatever123");
  await expect(errorLine(page).message).toHaveText(en["auth.error.invalid_credentials"]!);
});

test("too many failed sign-ins are rate limited", async ({ page, en }) => {
  const user = await registerUser(page.request);
  await page.request.post("/api/auth/logout");
  await page.goto("/app/login");
  const alert = errorLine(page).message;
  // Wrong passwords until the server refuses (LOGIN_MAX_FAILURES, 5 by default)...
  let limited = false;
  for (let i = 0; i < 30 && !limited; i++) {
    await signIn(page, en, user.email, `wrong-${i}-password`);
    const either = [en["auth.error.invalid_credentials"]!, en["auth.error.rate_limited"]!];
    await expect(alert).toHaveText(new RegExp(`^(${either.map((x) => x.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|")})$`));
    const text = await alert.textContent();
    limited = text === en["auth.error.rate_limited"];
    if (!limited) expect(text).toBe(en["auth.error.invalid_credentials"]);
  }
  expect(limited).toBe(true);
  // ... and then even the right password is refused.
  await signIn(page, en, user.email, user.password);
  await expect(alert).toHaveText(en["auth.error.rate_limited"]!);
  await expect(page).toHaveURL(/\/app\/login/);
});

test("registration errors: email taken, password too short", async ({ page, en }) => {
  const taken = await registerUser(page.request);
  await page.request.post("/api/auth/logout");
  await page.goto("/app/register");
  await page.getByLabel(en["auth.field.email"]!).fill(taken.email);
  await page.getByLabel(en["auth.field.password"]!).fill("long enough password");
  await page.getByRole("button", { name: en["auth.register.submit"] }).click();
  await expect(errorLine(page).message).toHaveText(en["auth.error.email_taken"]!);

  await page.getByLabel(en["auth.field.email"]!).fill(uniqueEmail("short"));
  await page.getByLabel(en["auth.field.password"]!).fill("short");
  await page.getByRole("button", { name: en["auth.register.submit"] }).click();
  await expect(errorLine(page).message).toHaveText(fmt(en["auth.error.password_too_short"]!, { min: 8 }));
  await expect(page).toHaveURL(/\/app\/register/);
});

test("a deep link while signed out leads to sign-in, then back to it", async ({ page, en }) => {
  const user = await registerUser(page.request);
  const p = await createPage(page.request, { title: "Deep Link Target", content: "# Deep Link Target\n\nHello there." });
  await page.request.post("/api/auth/logout");

  await page.goto(`/app/${p.slug}`);
  await expect(page).toHaveURL(/\/app\/login\?next=/);
  await signIn(page, en, user.email, user.password);
  // The old workspace-less link opens the page, and the address bar then names its workspace.
  await expect(page).toHaveURL(pageUrl(p.slug, "", user.workspace));
  await expect(page.getByRole("heading", { level: 1, name: "Deep Link Target" }).first()).toBeVisible();
  await expect(page.locator(".page-content")).toContainText("Hello there.");
});

test("the login screen links to registration and back", async ({ page, en }) => {
  await page.goto("/login");
  await expect(page).toHaveURL(/\/app\/login$/);
  await page.getByRole("link", { name: en["auth.register.submit"] }).click();
  await expect(page).toHaveURL(/\/app\/register$/);
  await expect(page.getByRole("button", { name: en["auth.register.submit"] })).toBeVisible();
  await page.getByRole("link", { name: en["auth.login.submit"] }).click();
  await expect(page).toHaveURL(/\/app\/login$/);
});
