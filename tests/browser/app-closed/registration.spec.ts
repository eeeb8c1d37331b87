// Against a server started with DISABLE_REGISTRATION=1: the register screen learns from
// the register answer that registration is closed (it sends no probe on arrival, whose
// answer on an open instance is an error the browser logs), then says so instead of the
// form.
import { expect, test, uniqueEmail } from "../fixtures";

test("the register screen says registration is closed", async ({ page, en }) => {
  // The API agrees.
  const res = await page.request.post("/api/auth/register", {
    data: { email: uniqueEmail("closed"), password: "long enough password" },
  });
  expect(res.status()).toBe(403);
  expect((await res.json()).code).toBe("registration_closed");

  await page.goto("/register");
  await expect(page).toHaveURL(/\/app\/register$/);
  await page.getByLabel(en["auth.field.email"]!).fill(uniqueEmail("closed"));
  await page.getByLabel(en["auth.field.password"]!).fill("long enough password");
  await page.getByRole("button", { name: en["auth.register.submit"] }).click();
  await expect(page.getByTestId("registration-closed")).toContainText(en["auth.error.registration_closed"]!);
  await expect(page.getByRole("button", { name: en["auth.register.submit"] })).toHaveCount(0);
  await expect(page.getByLabel(en["auth.field.password"]!)).toHaveCount(0);
  // Signing in is still offered.
  await page.getByRole("link", { name: en["auth.login.submit"] }).click();
  await expect(page).toHaveURL(/\/app\/login$/);
  await expect(page.getByRole("button", { name: en["auth.login.submit"] })).toBeVisible();
});
