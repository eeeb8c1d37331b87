// Invitations as people click them: an owner makes a link in the workspace settings and
// passes it on; a newcomer opens it, registers and lands in the workspace; an account
// invited by its email sees the invitation in the app and joins from there; the owner
// revokes a link and it stops working.
import { expect, fmt, registerUser, test, uniqueEmail } from "../fixtures";

test("an owner invites a newcomer by link, who registers into the workspace", async ({ page, browser, en, user }) => {
  await page.goto("/app/-/workspace");
  const section = page.getByRole("region", { name: en["invitation.heading"] });
  const email = uniqueEmail("newcomer");
  await section.getByLabel(en["auth.field.email"]!).fill(email);
  await section.getByRole("button", { name: en["invitation.create"] }).click();
  const shown = page.getByTestId("invitation-link");
  await expect(shown).toContainText(fmt(en["invitation.link_once"]!, { email }));
  const link = await shown.locator("input").inputValue();
  expect(link).toMatch(/\/app\/-\/invitation#[A-Za-z0-9]{40,}$/);
  await expect(page.getByTestId("invitation-list")).toContainText(email);

  // The newcomer, in a browser of their own, with no account.
  const context = await browser.newContext();
  const theirs = await context.newPage();
  await theirs.goto(link);
  await expect(theirs.getByTestId("invitation-offer")).toContainText(user.name);
  await expect(theirs.getByLabel(en["auth.field.email"]!)).toHaveValue(email);
  await theirs.getByLabel(en["auth.field.name"]!).fill("New Person");
  await theirs.getByLabel(en["auth.field.password"]!).fill("correct horse battery");
  await theirs.getByRole("button", { name: en["invitation.register"] }).click();
  await expect(theirs).toHaveURL(new RegExp(`/app/@${user.workspace}`));
  await expect(theirs.getByTestId("workspace-switcher")).toBeVisible();

  // Used: the link says so now, and the owner's list is empty again.
  const again = await context.newPage();
  await again.goto(link);
  await expect(again.getByTestId("invitation-missing")).toContainText(en["invitation.not_found"]!);
  await context.close();
  await page.reload();
  await expect(page.getByRole("region", { name: en["workspace.members"] })).toContainText(email);
  await expect(page.getByTestId("invitation-list")).toHaveCount(0);
});

test("an invited account sees the invitation in the app and joins; a revoked link stops", async ({ page, browser, playwright, baseURL, en, user }) => {
  const other = await browser.newContext();
  const theirs = await other.newPage();
  const invited = await registerUser(theirs.request, "Invited Person");
  const made = await page.request.post(`/api/workspaces/${user.workspace}/invitations`, { data: { email: invited.email } });
  expect(made.status()).toBe(201);

  await theirs.goto("/app/");
  const banner = theirs.getByTestId("invitations-for-you");
  await expect(banner).toContainText(user.name);
  await banner.getByRole("button", { name: fmt(en["invitation.join"]!, { workspace: `${user.name}'s workspace` }) }).click();
  await expect(theirs).toHaveURL(new RegExp(`/app/@${user.workspace}`));
  await expect(banner).toHaveCount(0);
  await other.close();

  // Revoked from the settings: the link answers "does not work" at once.
  const anon = await playwright.request.newContext({ baseURL });
  const late = await (await page.request.post(`/api/workspaces/${user.workspace}/invitations`, { data: { email: uniqueEmail("late") } })).json();
  await page.goto("/app/-/workspace");
  const row = page.getByTestId("invitation-list").getByRole("row", { name: new RegExp(late.email.replace(/[.+]/g, "\\$&")) });
  await row.getByRole("button", { name: `${en["invitation.revoke"]}: ${late.email}` }).click();
  await page.getByRole("dialog", { name: en["common.confirm"] }).getByRole("button", { name: en["invitation.revoke"] }).click();
  await expect(page.getByTestId("invitation-list")).toHaveCount(0);
  expect((await anon.get(`/api/invitations/link?token=${late.token}`)).status()).toBe(404);
});
