// A rename never breaks an address (CONTRACT §5): a page opened at an old address shows at
// its current one, the address bar rewritten with the #fragment kept (and scrolled to);
// the editor likewise; chains of renames resolve; never "This page does not exist yet".
// And renaming or deleting a page asks nothing more of its old address (before, the page
// view reloaded it after every rename and delete: a stray 404).
import type { Page, Request } from "@playwright/test";
import { source } from "../editing";
import { createPage, expect, pageUrl, test } from "../fixtures";

/** Every request to the API after the call, with its answer's status once it has one. */
function apiLog(page: Page) {
  const seen: { req: Request; status: number | null }[] = [];
  page.on("request", (req) => {
    if (new URL(req.url()).pathname.startsWith("/api/")) seen.push({ req, status: null });
  });
  const answered = (req: Request, status: number) => {
    const entry = seen.find((e) => e.req === req);
    if (entry) entry.status = status;
  };
  page.on("response", (res) => answered(res.request(), res.status()));
  page.on("requestfailed", (req) => answered(req, 0));
  return {
    /** Waits until every request seen has been answered, then lists them. */
    async settled() {
      await expect.poll(() => seen.filter((e) => e.status === null).length).toBe(0);
      return seen.map((e) => ({ method: e.req.method(), path: new URL(e.req.url()).pathname, status: e.status! }));
    },
    clear: () => void seen.splice(0),
  };
}

test("an old address opens the page at its current one, #fragment kept; so does the editor", async ({ page, en, user }) => {
  const filler = Array.from({ length: 40 }, (_, i) => `Paragraph ${i + 1} of the procedure.`).join("\n\n");
  await createPage(page.request, {
    title: "Incident Response",
    content: `# Incident Response\n\n${filler}\n\n## Escalation\n\nCall the on-call lead.\n`,
  });
  await page.goto("/app/incident-response");
  await expect(page.locator(".page-title")).toHaveText("Incident Response");

  // Renamed in the app; the rename asks nothing more of the old address.
  const log = apiLog(page);
  await page.getByTestId("page-more").click();
  await page.getByRole("menuitem", { name: en["page.rename"] }).click();
  const rename = page.getByRole("dialog", { name: en["page.rename"] });
  await rename.getByLabel(en["page.title_placeholder"]!).fill("Incident Management");
  await expect(rename.getByLabel(en["page.path"]!)).toHaveValue("incident-management");
  await rename.getByRole("button", { name: en["page.rename"] }).click();
  await expect(page).toHaveURL(pageUrl("incident-management", "", user.workspace));
  await expect(page.locator(".page-title")).toHaveText("Incident Management");
  await expect(page.getByRole("tree").getByRole("link", { name: "Incident Management" })).toBeVisible();
  const afterRename = await log.settled();
  expect(afterRename.filter((r) => r.status === 404), "no 404 during the rename").toEqual([]);
  expect(
    afterRename.filter((r) => r.path.startsWith("/api/pages/incident-response") && !r.path.endsWith("/rename")),
    "nothing asked of the old address after the rename",
  ).toEqual([]);

  // A link pasted into a ticket before the rename, to a section of the page.
  await page.goto(`/app/@${user.workspace}/incident-response#escalation`);
  await expect(page.locator(".page-title")).toHaveText("Incident Management");
  await expect(page).toHaveURL(new RegExp(`/app/@${user.workspace}/incident-management#escalation$`));
  await expect(page.locator("#escalation")).toBeInViewport();
  await expect(page.getByTestId("page-missing")).toHaveCount(0);
  await expect(page.getByText(en["page.not_found"]!)).toHaveCount(0);

  // The editor at the old address edits the page at its current one.
  await page.goto(`/app/@${user.workspace}/incident-response/edit`);
  await expect(page).toHaveURL(pageUrl("incident-management", "edit", user.workspace));
  // (The rename gave the first heading the new title.)
  await expect(source(page)).toContainText("# Incident Management");
  await expect(page.getByText(en["page.not_found"]!)).toHaveCount(0);
});

test("a chain of renames resolves: a → b → c", async ({ page, en, user }) => {
  await createPage(page.request, { title: "Alpha", slug: "alpha", content: "# Alpha\n\nThe first name.\n" });
  for (const [from, to] of [
    ["alpha", "beta"],
    ["beta", "gamma"],
  ]) {
    const res = await page.request.post(`/api/pages/${from}/rename`, { data: { new_slug: to } });
    expect(res.status(), await res.text()).toBe(200);
  }
  await page.goto(`/app/@${user.workspace}/alpha`);
  await expect(page).toHaveURL(pageUrl("gamma", "", user.workspace));
  await expect(page.locator(".page-content")).toContainText("The first name.");
  await page.goto(`/app/@${user.workspace}/beta`);
  await expect(page).toHaveURL(pageUrl("gamma", "", user.workspace));
  await expect(page.locator(".page-content")).toContainText("The first name.");
  await expect(page.getByText(en["page.not_found"]!)).toHaveCount(0);
  // The history at an old address is the page's, at its current address.
  await page.goto(`/app/@${user.workspace}/alpha/history`);
  await expect(page).toHaveURL(pageUrl("gamma", "history", user.workspace));
  await expect(page.getByTestId("history-list")).toContainText("Rename beta → gamma");
});

test("deleting a page asks nothing more of it; its address then says who deleted it, not 'create'", async ({ page, en, user }) => {
  await createPage(page.request, { title: "Old Plan", content: "# Old Plan\n\nNo longer needed.\n" });
  await page.goto("/app/old-plan");
  await expect(page.locator(".page-title")).toHaveText("Old Plan");
  await expect(page.getByRole("tree").getByRole("link", { name: "Old Plan" })).toBeVisible();

  const log = apiLog(page);
  await page.getByTestId("page-more").click();
  await page.getByRole("menuitem", { name: en["page.delete"] }).click();
  await page.getByRole("dialog", { name: en["common.confirm"] }).getByRole("button", { name: en["page.delete"] }).click();
  await expect(page).not.toHaveURL(/old-plan/);
  await expect(page.getByRole("tree").getByRole("link", { name: "Old Plan" })).toHaveCount(0);
  const requests = await log.settled();
  expect(requests.filter((r) => r.status === 404), "no 404 during the delete").toEqual([]);
  expect(
    requests.filter((r) => r.path.startsWith("/api/pages/old-plan") && r.method !== "DELETE"),
    "nothing asked of the deleted page after its delete",
  ).toEqual([]);

  // Its address, opened later: in the trash, deleted by whom — and offered back, never as a new page.
  await page.goto(`/app/@${user.workspace}/old-plan`);
  const trashed = page.getByTestId("page-trashed");
  await expect(trashed).toContainText(user.name);
  await expect(page.getByTestId("page-missing")).toHaveCount(0);
  await trashed.getByRole("button", { name: en["trash.restore"] }).click();
  await expect(page.locator(".page-content")).toContainText("No longer needed.");
  await expect(page).toHaveURL(pageUrl("old-plan", "", user.workspace));
});
