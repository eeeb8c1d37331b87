// Workspace settings (/app/-/workspace): rename, members (owners add and remove; members
// only read), webhooks with their deliveries, delete with a typed confirmation.
import { createPage, errorLine, expect, fmt, registerUser, test } from "../fixtures";

test("owner: rename, add and remove members, delete with the slug typed", async ({ page, playwright, baseURL, en, user }) => {
  const other = await playwright.request.newContext({ baseURL });
  const colleague = await registerUser(other, "Colleague Person");
  // A second workspace, made current, to be deleted at the end.
  const ws = await (await page.request.post("/api/workspaces", { data: { name: "Doomed Space" } })).json();
  await page.request.post(`/api/workspaces/${ws.slug}/switch`);

  await page.goto("/app/");
  await page.getByTestId("workspace-switcher").click();
  await page.getByTestId("workspace-settings").click();
  await expect(page).toHaveURL(/\/app\/-\/workspace$/);

  // Rename: the switcher follows.
  const rename = page.getByRole("region", { name: en["workspace.rename"] });
  await rename.getByLabel(en["workspace.name"]!).fill("Project Space");
  await rename.getByRole("button", { name: en["workspace.rename"] }).click();
  await expect(rename.getByRole("status")).toHaveText(en["workspace.renamed"]!);
  await expect(page.getByTestId("workspace-switcher")).toContainText("Project Space");

  // Members: an unknown email is explained; a known one is added with its role.
  const members = page.getByRole("region", { name: en["workspace.members"] });
  const list = page.getByTestId("member-list");
  await expect(list).toContainText(user.email);
  await members.getByLabel(en["workspace.add_member_email"]!).fill("nobody-here@example.test");
  await members.getByRole("button", { name: en["workspace.add_member"] }).click();
  await expect(members.getByRole("alert")).toHaveText(fmt(en["workspace.member_not_found"]!, { email: "nobody-here@example.test" }));
  await members.getByLabel(en["workspace.add_member_email"]!).fill(colleague.email);
  await members.getByLabel(en["workspace.role"]!).selectOption("owner");
  await members.getByRole("button", { name: en["workspace.add_member"] }).click();
  const row = list.getByRole("row", { name: new RegExp(colleague.email.replace(/[.+]/g, "\\$&")) });
  await expect(row).toContainText(en["workspace.role.owner"]!);
  await expect(members.getByRole("alert")).toHaveCount(0);
  // Adding them twice says so.
  await members.getByLabel(en["workspace.add_member_email"]!).fill(colleague.email);
  await members.getByRole("button", { name: en["workspace.add_member"] }).click();
  await expect(errorLine(members).message).toHaveText(en["workspace.already_member"]!);
  await expect(errorLine(members).detail).toHaveCount(0); // said once, not again in the server's English

  await row.getByRole("button", { name: `${en["workspace.remove_member"]}: ${colleague.email}` }).click();
  const confirm = page.getByRole("dialog", { name: en["common.confirm"] });
  await expect(confirm).toContainText("Colleague Person");
  await confirm.getByRole("button", { name: en["workspace.remove_member"] }).click();
  await expect(list).not.toContainText(colleague.email);

  // Delete: the button stays disabled until the slug is typed.
  const zone = page.getByRole("region", { name: en["workspace.delete"] });
  await zone.getByRole("button", { name: en["workspace.delete"] }).click();
  const dialog = page.getByRole("dialog", { name: en["workspace.delete"] });
  const submit = dialog.getByRole("button", { name: en["workspace.delete"] });
  await expect(submit).toBeDisabled();
  const field = dialog.getByLabel(fmt(en["workspace.delete_type_slug"]!, { slug: ws.slug }));
  await field.fill("project-space");
  await expect(submit).toBeDisabled();
  await field.fill(ws.slug);
  await submit.click();
  await expect(dialog).toHaveCount(0);
  await expect(page).toHaveURL(/\/app\/$/);
  await expect(page.getByTestId("workspace-switcher")).not.toContainText("Project Space");
  const left = (await (await page.request.get("/api/workspaces")).json()).items.map((w: { slug: string }) => w.slug);
  expect(left).toEqual([user.workspace]);
  await other.dispose();
});

test("member: a read-only list of members, no owner controls", async ({ page, playwright, baseURL, en, user }) => {
  const other = await playwright.request.newContext({ baseURL });
  const owner = await registerUser(other, "Owner Person");
  const added = await other.post(`/api/workspaces/${owner.workspace}/members`, { data: { email: user.email, role: "member" } });
  expect(added.status()).toBe(201);
  await page.request.post(`/api/workspaces/${owner.workspace}/switch`);

  await page.goto("/app/-/workspace");
  await expect(page.getByTestId("member-list")).toContainText(owner.email);
  await expect(page.getByTestId("member-list")).toContainText(user.email);
  await expect(page.getByTestId("members-read-only")).toHaveText(en["workspace.owners_only"]!);
  await expect(page.getByTestId("add-member")).toHaveCount(0);
  await expect(page.getByRole("button", { name: new RegExp(en["workspace.remove_member"]!) })).toHaveCount(0);
  await expect(page.getByRole("region", { name: en["workspace.rename"] })).toHaveCount(0);
  await expect(page.getByRole("region", { name: en["settings.webhooks.title"] })).toHaveCount(0);
  await expect(page.getByRole("button", { name: en["workspace.delete"] })).toHaveCount(0);
  await other.dispose();
});

test("webhooks: private targets refused, create (secret once), deliveries, delete", async ({ page, en, user }) => {
  void user;
  await page.goto("/app/-/workspace");
  const hooks = page.getByRole("region", { name: en["settings.webhooks.title"] });
  await expect(hooks.getByText(en["settings.webhooks.empty"]!)).toBeVisible();
  const url = hooks.getByLabel(en["settings.webhooks.url"]!);

  // The SSRF guard: loopback targets are refused with a clear message.
  await url.fill("http://127.0.0.1/hook");
  await hooks.getByRole("button", { name: en["settings.webhooks.create"] }).click();
  await expect(errorLine(hooks).message).toHaveText(en["settings.webhooks.target_not_allowed"]!);
  await expect(errorLine(hooks).detail).toHaveCount(0);

  // A public address, for two of the events.
  await url.fill("https://8.8.8.8/hook");
  for (const kind of ["page_deleted", "page_moved", "page_renamed"]) {
    await hooks.getByRole("checkbox", { name: en[`settings.webhooks.event.${kind}`] }).uncheck();
  }
  await hooks.getByRole("button", { name: en["settings.webhooks.create"] }).click();
  const secret = page.getByTestId("new-webhook-secret");
  await expect(secret).toContainText(en["settings.webhooks.secret_shown_once"]!);
  expect(await secret.getByRole("textbox").inputValue()).toMatch(/^whsec_/);
  await expect(hooks.getByRole("alert")).toHaveCount(0);
  const item = page.getByTestId("webhook-list").getByRole("listitem").filter({ hasText: "https://8.8.8.8/hook" });
  await expect(item).toContainText(`${en["settings.webhooks.event.page_created"]}, ${en["settings.webhooks.event.page_updated"]}`);
  const listed = (await (await page.request.get("/api/webhooks")).json()).items;
  expect(listed[0].events).toEqual(["page.created", "page.updated"]);
  expect(listed[0].secret).toBeUndefined();

  // An event queues a delivery, shown with its status and attempts.
  await createPage(page.request, { title: "Hooked", content: "x" });
  await item.getByRole("button", { name: en["settings.webhooks.deliveries"] }).click();
  const deliveries = item.getByTestId(/^deliveries-/);
  const refresh = deliveries.getByRole("button", { name: en["common.refresh"] });
  await expect(async () => {
    await refresh.click();
    await expect(deliveries.locator("tbody tr").first()).toContainText(en["settings.webhooks.event.page_created"]!, { timeout: 1000 });
  }).toPass({ timeout: 10_000 });
  const status = await deliveries.locator("tbody tr").first().getAttribute("data-status");
  expect(["pending", "retrying", "failed", "delivered"]).toContain(status);
  await expect(deliveries.locator("tbody tr").first()).toContainText(en[`settings.webhooks.status.${status}`]!);

  await item.getByRole("button", { name: `${en["common.delete"]}: https://8.8.8.8/hook` }).click();
  await page.getByRole("dialog", { name: en["common.confirm"] }).getByRole("button", { name: en["common.delete"] }).click();
  await expect(hooks.getByText(en["settings.webhooks.empty"]!)).toBeVisible();
});
