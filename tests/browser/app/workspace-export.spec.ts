// Workspace settings: "Export as ZIP" downloads the workspace, and
// which owner-only controls show is what the server says the caller may do (the
// workspace's `can` in GET /api/workspaces, or GET /api/workspaces/{slug}), not the
// app's own copy of the rule.
import { readFileSync } from "node:fs";
import { createPage, expect, registerUser, test } from "../fixtures";
import type { Page } from "@playwright/test";

/** Answers GET /api/workspaces/{slug}, and the workspace's item of GET /api/workspaces,
 *  with its `can` changed (the rest as the server said). */
async function serverSays(page: Page, slug: string, can: Record<string, boolean>): Promise<void> {
  const narrowed = (w: { slug: string; can?: Record<string, boolean> }) => {
    if (w.slug !== slug) return w;
    expect(w.can, "the server answers `can`").toBeTruthy();
    return { ...w, can: { ...w.can, ...can } };
  };
  await page.route(
    (url) => url.pathname === "/api/workspaces" || url.pathname === `/api/workspaces/${slug}`,
    async (route) => {
      const res = await route.fetch();
      if (route.request().method() !== "GET" || !res.ok()) return route.fulfill({ response: res });
      const body = await res.json();
      const json = body.items ? { ...body, items: body.items.map(narrowed) } : narrowed(body);
      await route.fulfill({ response: res, json });
    },
  );
}

test("any member exports the workspace as a zip of its pages", async ({ page, playwright, baseURL, en, user }) => {
  const other = await playwright.request.newContext({ baseURL });
  const owner = await registerUser(other, "Owner Person");
  await createPage(other, { title: "Shared Plan", content: "# Shared Plan\n\nsteps" });
  await other.post(`/api/workspaces/${owner.workspace}/members`, { data: { email: user.email, role: "member" } });
  await page.request.post(`/api/workspaces/${owner.workspace}/switch`);

  await page.goto("/app/-/workspace");
  const download = page.waitForEvent("download");
  const section = page.getByRole("region", { name: en["workspace.export"] });
  await section.getByRole("link", { name: en["workspace.export_zip"] }).click();
  const file = await download;
  expect(file.suggestedFilename()).toBe(`${owner.workspace}.zip`);
  const bytes = readFileSync(await file.path());
  expect(bytes.subarray(0, 2).toString("latin1")).toBe("PK"); // a zip
  expect(bytes.includes(Buffer.from("shared-plan.md"))).toBe(true); // names are stored as is
  await other.dispose();
});

test("owner-only controls follow the server's `can`, not the role", async ({ page, playwright, baseURL, en, user }) => {
  // An owner whom the server (here: its answer, narrowed) lets rename but not manage
  // webhooks or delete sees only the rename.
  await serverSays(page, user.workspace, { rename: true, manage_members: true, manage_webhooks: false, delete: false });
  await page.goto("/app/-/workspace");
  await expect(page.getByRole("region", { name: en["workspace.rename"] })).toBeVisible();
  await expect(page.getByTestId("add-member")).toBeVisible();
  await expect(page.getByRole("region", { name: en["settings.webhooks.title"] })).toHaveCount(0);
  await expect(page.getByRole("region", { name: en["workspace.delete"] })).toHaveCount(0);

  // A member whom the server lets manage webhooks gets that section, and nothing else.
  const other = await playwright.request.newContext({ baseURL });
  const owner = await registerUser(other, "Owner Person");
  await other.post(`/api/workspaces/${owner.workspace}/members`, { data: { email: user.email, role: "member" } });
  await page.request.post(`/api/workspaces/${owner.workspace}/switch`);
  // Requests of the screen left may still be in the handler: let them go quietly.
  await page.unrouteAll({ behavior: "ignoreErrors" });
  await serverSays(page, owner.workspace, { manage_webhooks: true });
  await page.goto("/app/-/workspace");
  await expect(page.getByRole("region", { name: en["settings.webhooks.title"] })).toBeVisible();
  await expect(page.getByRole("region", { name: en["workspace.rename"] })).toHaveCount(0);
  await expect(page.getByTestId("members-read-only")).toBeVisible();
  await expect(page.getByRole("region", { name: en["workspace.delete"] })).toHaveCount(0);
  await page.unrouteAll({ behavior: "ignoreErrors" });
  await other.dispose();
});
