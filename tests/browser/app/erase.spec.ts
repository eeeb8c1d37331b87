// Erasing a revision's content from the history screen (api.md, "Erase a revision's
// content"): an owner erases the revision that saved a secret through a dialog that says
// what the erasure does; the revision keeps its place by its new id and shows the previous
// revision's content. Never offered for the current revision; a 409 for content the page
// holds now is said in the dialog. Members are not offered it, and a 403 (an owner made a
// member while the screen was open) is said too.
import AxeBuilder from "@axe-core/playwright";
import type { APIRequestContext, Page } from "@playwright/test";
import { createPage, errorLine, expect, fmt, pageUrl, registerUser, test } from "../fixtures";

const short = (sha: string) => sha.slice(0, 8);

/** The page's revision ids, newest first. */
async function revisions(request: APIRequestContext, slug: string, ws?: string): Promise<string[]> {
  const res = await request.get(`/api/pages/${slug}/history${ws ? `?ws=${ws}` : ""}`);
  expect(res.status()).toBe(200);
  return ((await res.json()).items as { sha: string }[]).map((i) => i.sha);
}

async function save(request: APIRequestContext, slug: string, content: string, ws?: string): Promise<void> {
  const res = await request.put(`/api/pages/${slug}${ws ? `?ws=${ws}` : ""}`, { data: { content } });
  expect(res.status(), await res.text()).toBe(200);
}

/** axe-core over the screen as it is: any "serious" or "critical" violation fails (as in a11y.spec.ts). */
async function axe(page: Page, where: string): Promise<void> {
  await page.waitForTimeout(150); // let late renders settle
  const tags = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"];
  const result = await new AxeBuilder({ page }).withTags(tags).analyze();
  const bad = result.violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${where}: ${v.id} (${v.impact}) ${v.help} — ${v.nodes.slice(0, 3).map((n) => n.target.join(" "))}`);
  expect.soft(bad, bad.join("\n")).toEqual([]);
}

/** Opens revision `sha` from the history list, and waits for its diff. */
async function openRevision(page: Page, sha: string): Promise<void> {
  await page.getByTestId("history-list").getByRole("link", { name: short(sha), exact: true }).click();
  await expect(page).toHaveURL(pageUrl("secrets", `history/${sha}`));
  await expect(page.getByTestId("revision").locator("h2")).toContainText(short(sha));
  await expect(page.getByTestId("diff")).toBeVisible();
}

test("an owner erases a saved secret from the history; the current revision offers no erase", async ({ page, en, user }) => {
  await createPage(page.request, { title: "Secrets", slug: "secrets", content: "# Secrets\n\nversion one\n" });
  await save(page.request, "secrets", "# Secrets\n\nversion one\npassword: HUNTER2\n");
  await save(page.request, "secrets", "# Secrets\n\nversion three\n");
  const [v3, v2, v1] = await revisions(page.request, "secrets");

  await page.goto(`/app/@${user.workspace}/secrets/history`);
  const erase = page.getByRole("button", { name: en["history.erase"] });

  // The current revision: restore and erase are not offered.
  await openRevision(page, v3!);
  await expect(page.getByTestId("diff")).toContainText("+version three");
  await expect(erase).toHaveCount(0);
  await expect(page.getByTestId("restore-revision")).toHaveCount(0);

  // The revision that saved the secret: its diff and its content show it.
  await openRevision(page, v2!);
  await expect(page.getByTestId("diff")).toContainText("+password: HUNTER2");
  const view = page.getByRole("button", { name: en["page.view"], exact: true });
  await view.click();
  await expect(page.locator(".page-content")).toContainText("password: HUNTER2");

  // The dialog says what happens, and its button is the destructive one. Cancel first.
  await erase.click();
  const dialog = page.getByRole("dialog", { name: en["history.erase_title"] });
  await expect(dialog).toBeVisible();
  const date = (await page.getByTestId("revision").locator("p.muted").first().innerText()).split(" · ")[1]!.trim();
  await expect(dialog).toContainText(fmt(en["history.erase_confirm"]!, { date }));
  for (const key of ["history.erase_gone", "history.erase_backups", "history.erase_rotate"]) {
    await expect(dialog).toContainText(en[key]!);
  }
  const submit = dialog.getByRole("button", { name: en["history.erase_submit"] });
  await expect(submit).toHaveClass(/\bdanger\b/);
  await axe(page, "erase dialog");
  await dialog.getByRole("button", { name: en["common.cancel"] }).click();
  await expect(dialog).toHaveCount(0);
  expect((await revisions(page.request, "secrets"))[1]).toBe(v2); // nothing was sent

  await erase.click();
  const answered = page.waitForResponse((r) => r.request().method() === "POST" && r.url().includes(`/history/${v2}/erase`));
  await submit.click();
  const response = await answered;
  expect(response.status()).toBe(200);
  const { sha: erased } = (await response.json()) as { sha: string };
  expect(erased).not.toBe(v2);
  await expect(dialog).toHaveCount(0);

  // The same revision, by its new id, still in the content view, now with version one's
  // content; the confirmation names the new id.
  await expect(page).toHaveURL(pageUrl("secrets", `history/${erased}`, user.workspace));
  await expect(page.getByRole("status")).toHaveText(fmt(en["history.erased"]!, { revision: short(erased) }));
  await expect(page.getByTestId("revision").locator("h2")).toContainText(short(erased));
  await expect(view).toHaveAttribute("aria-pressed", "true");
  await expect(page.locator(".page-content")).toContainText("version one");
  await expect(page.locator(".page-content")).not.toContainText("HUNTER2");
  await axe(page, "history after an erase");
  // Its diff: nothing changed against version one.
  await page.getByRole("button", { name: en["page.diff"], exact: true }).click();
  await expect(page.getByTestId("diff")).toBeVisible();
  await expect(page.getByTestId("diff")).not.toContainText("HUNTER2");
  await expect(page.getByTestId("revision")).toContainText(en["history.no_changes"]!);

  // The history was read again: new ids from that revision on, the first one kept; the
  // erased revision is the one marked.
  const after = await revisions(page.request, "secrets");
  expect(after).toHaveLength(3);
  expect(after[1]).toBe(erased);
  expect(after[2]).toBe(v1);
  expect(after[0]).not.toBe(v3);
  const rows = page.getByTestId("history-list").locator("tbody tr");
  await expect(rows.nth(0).getByRole("link")).toHaveText(short(after[0]!));
  await expect(rows.nth(1)).toHaveClass(/\bcurrent\b/);
  await expect(rows.nth(1).getByRole("link")).toHaveText(short(erased));

  // The new current revision offers no erase either; the page keeps version three.
  await openRevision(page, after[0]!);
  await expect(page.getByTestId("diff")).toContainText("+version three");
  await expect(erase).toHaveCount(0);
  // The old id still answers, with the erased content.
  const old = await page.request.get(`/api/pages/secrets/history/${v2}`);
  expect(old.status()).toBe(200);
  expect((await old.json()).content).not.toContain("HUNTER2");
  await page.goto(`/app/@${user.workspace}/secrets`);
  await expect(page.locator(".page-content")).toContainText("version three");
});

test("erasing content the page holds now is refused with the reason in the dialog", async ({ page, en, user }) => {
  await createPage(page.request, { title: "Secrets", slug: "secrets", content: "# Secrets\n\nsame again\n" });
  await save(page.request, "secrets", "# Secrets\n\nsomething else\n");
  await save(page.request, "secrets", "# Secrets\n\nsame again\n");
  const [, , v1] = await revisions(page.request, "secrets");

  await page.goto(`/app/@${user.workspace}/secrets/history`);
  await openRevision(page, v1!);
  await page.getByRole("button", { name: en["history.erase"] }).click();
  const dialog = page.getByRole("dialog", { name: en["history.erase_title"] });
  await dialog.getByRole("button", { name: en["history.erase_submit"] }).click();
  const error = errorLine(dialog);
  await expect(error.message).toHaveText(en["history.erase_is_current"]!);
  await expect(error.detail).toHaveCount(0);
  await expect(dialog).toBeVisible();
  expect((await revisions(page.request, "secrets"))[2]).toBe(v1);
});

test("a member of a shared workspace is not offered the erase; a demoted owner is told no", async ({
  page,
  playwright,
  baseURL,
  en,
  user,
}) => {
  const owner = await playwright.request.newContext({ baseURL });
  await registerUser(owner, "Owner");
  const created = await owner.post("/api/workspaces", { data: { name: `Shared ${Math.random().toString(36).slice(2, 8)}` } });
  expect(created.status(), await created.text()).toBe(201);
  const ws = (await created.json()).slug as string;
  const added = await owner.post(`/api/workspaces/${ws}/members`, { data: { email: user.email } });
  expect(added.status(), await added.text()).toBe(201);
  expect((await added.json()).role).toBe("member");
  const made = await owner.post(`/api/pages?ws=${ws}`, { data: { title: "Secrets", slug: "secrets", content: "# Secrets\n\none\n" } });
  expect(made.status(), await made.text()).toBe(201);
  await save(owner, "secrets", "# Secrets\n\none\npassword: HUNTER2\n", ws);
  await save(owner, "secrets", "# Secrets\n\nthree\n", ws);
  const [, v2] = await revisions(owner, "secrets", ws);

  // The member sees the revision, and restore, but no erase.
  await page.goto(`/app/@${ws}/secrets/history`);
  await openRevision(page, v2!);
  await expect(page.getByTestId("restore-revision")).toBeVisible();
  await expect(page.getByRole("button", { name: en["history.erase"] })).toHaveCount(0);
  await expect(page.getByTestId("erase-revision")).toHaveCount(0);
  const refused = await page.request.post(`/api/pages/secrets/history/${v2}/erase?ws=${ws}`);
  expect(refused.status()).toBe(403);
  expect((await refused.json()).code).toBe("owner_only");

  // Made an owner, the member is offered it (the app reads its role on loading)...
  const me = ((await (await owner.get(`/api/workspaces/${ws}/members`)).json()).items as { id: number; email: string }[]).find(
    (m) => m.email === user.email,
  )!;
  expect((await owner.delete(`/api/workspaces/${ws}/members/${me.id}`)).status()).toBe(204);
  expect((await owner.post(`/api/workspaces/${ws}/members`, { data: { email: user.email, role: "owner" } })).status()).toBe(201);
  await page.reload();
  await expect(page.getByTestId("diff")).toBeVisible();
  await page.getByRole("button", { name: en["history.erase"] }).click();
  const dialog = page.getByRole("dialog", { name: en["history.erase_title"] });
  await expect(dialog).toBeVisible();

  // ...and made a member again while the dialog is open, is told so in it.
  expect((await owner.delete(`/api/workspaces/${ws}/members/${me.id}`)).status()).toBe(204);
  expect((await owner.post(`/api/workspaces/${ws}/members`, { data: { email: user.email, role: "member" } })).status()).toBe(201);
  await dialog.getByRole("button", { name: en["history.erase_submit"] }).click();
  await expect(errorLine(dialog).message).toHaveText(en["common.forbidden"]!);
  expect(await revisions(owner, "secrets", ws)).toContain(v2);
  await owner.dispose();
});
