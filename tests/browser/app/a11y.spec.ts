// Accessibility: axe-core over the main screens in the light and the dark theme (any
// "serious" or "critical" violation fails), and keyboard focus that is always visible.
import AxeBuilder from "@axe-core/playwright";
import type { Page } from "@playwright/test";
import { createPage, expect, registerUser, test, type Messages } from "../fixtures";

// The dark theme changes colours only (same markup), so its pass runs the colour rules.
const COLOUR_RULES = ["color-contrast", "link-in-text-block"];

async function axe(page: Page, where: string): Promise<void> {
  // Let transitions and late renders settle.
  await page.waitForTimeout(150);
  const builder = new AxeBuilder({ page });
  if (where.endsWith("[dark]")) builder.withRules(COLOUR_RULES);
  else builder.withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"]);
  const result = await builder.analyze();
  const bad = result.violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${where}: ${v.id} (${v.impact}) ${v.help}\n    ${v.nodes.slice(0, 4).map((n) => n.target.join(" ") + " — " + n.failureSummary?.split("\n").slice(1, 2).join(" ")).join("\n    ")}`);
  expect.soft(bad, bad.join("\n")).toEqual([]);
}

const CONTENT = `# Deploy runbook

Steps to ship a release. See [[Incident response]] and [[Missing page]].

## Before

- [x] Tests green
- [ ] Changelog written

| Step | Owner |
|------|-------|
| Tag  | Release captain |

\`\`\`sh
git tag v1.2.3 && git push --tags
\`\`\`

> Never deploy on Fridays.

#ops #release
`;

async function seed(page: Page): Promise<void> {
  await createPage(page.request, { title: "Deploy runbook", content: CONTENT });
  await createPage(page.request, { title: "Incident response", content: "# Incident response\n\nPage the on-call. Back to [[Deploy runbook]]." });
  await createPage(page.request, { title: "Rollback", parent: "deploy-runbook", content: "# Rollback\n\nRevert the tag. #ops" });
  const res = await page.request.put("/api/pages/deploy-runbook", {
    data: { content: CONTENT + "\nEdited once.\n" },
  });
  expect(res.ok()).toBeTruthy();
  await createPage(page.request, { title: "Old page", content: "gone" });
  expect((await page.request.delete("/api/pages/old-page")).status()).toBe(204);
}

async function screens(page: Page, en: Messages, theme: string): Promise<void> {
  const at = (s: string) => `${s} [${theme}]`;
  await page.goto("/app/deploy-runbook");
  await expect(page.locator(".page-content")).toContainText("Steps to ship");
  await axe(page, at("page view"));

  await page.goto("/app/deploy-runbook/edit");
  await expect(page.getByTestId("source-editor")).toBeVisible();
  await axe(page, at("editor"));

  await page.goto("/app/-/search?q=deploy&mode=keyword");
  await expect(page.locator(".results li").first()).toBeVisible();
  await axe(page, at("search results"));
  await page.locator(".header").getByRole("searchbox", { name: en["nav.search"] }).fill("deploy");
  await expect(page.getByRole("listbox").getByRole("option").first()).toBeVisible();
  await axe(page, at("instant search"));

  await page.goto("/app/deploy-runbook/history");
  await page.locator("table a[href*='/history/']").first().click();
  await expect(page.locator(".diff, .diff-split").first()).toBeVisible();
  await axe(page, at("history with diff"));

  await page.goto("/app/-/trash");
  await expect(page.getByText("Old page")).toBeVisible();
  await axe(page, at("trash"));

  await page.goto("/app/-/settings");
  await expect(page.locator(".settings h1")).toBeVisible();
  await axe(page, at("settings"));

  await page.goto("/app/-/workspace");
  await expect(page.locator(".settings h1")).toBeVisible();
  await axe(page, at("workspace settings"));

  await page.goto("/app/-/insights");
  await expect(page.locator(".insights-grid")).toBeVisible();
  await axe(page, at("insights"));

  await page.goto("/app/-/graph");
  await expect(page.locator(".graph .node").first()).toBeVisible();
  await axe(page, at("graph"));

  await page.goto("/app/deploy-runbook");
  await expect(page.locator(".page-content")).toBeVisible();
  await page.getByRole("button", { name: en["palette.title"] }).click();
  await expect(page.locator(".palette")).toBeVisible();
  await page.keyboard.type("dep");
  await expect(page.locator(".palette-item").first()).toBeVisible();
  await axe(page, at("command palette"));
  await page.keyboard.press("Escape");

  await page.getByTestId("user-menu").click();
  await axe(page, at("user menu"));
}

for (const theme of ["light", "dark"] as const) {
  test(`axe: no serious or critical violations on the main screens (${theme})`, async ({ page, en }) => {
    test.setTimeout(120_000);
    await page.addInitScript((t) => localStorage.setItem("cairn.theme", t), theme);
    await page.emulateMedia({ colorScheme: theme });

    // Signed out: sign in and register.
    await page.goto("/app/login");
    await expect(page.getByRole("button", { name: en["auth.login.submit"] })).toBeVisible();
    await axe(page, `sign in [${theme}]`);
    await page.goto("/app/register");
    await expect(page.locator("form")).toBeVisible();
    await axe(page, `register [${theme}]`);

    await registerUser(page.request);
    await seed(page);
    await screens(page, en, theme);
  });
}

/** Whether the focused element shows a focus indicator (outline or box-shadow). */
async function focusVisible(page: Page): Promise<{ desc: string; visible: boolean }> {
  return page.evaluate(() => {
    let el = document.activeElement as HTMLElement | null;
    while (el?.shadowRoot?.activeElement) el = el.shadowRoot.activeElement as HTMLElement;
    if (!el || el === document.body) return { desc: "body", visible: true };
    // A tree item shows its focus on its own row (an outline would wrap its whole subtree).
    const shown = el.getAttribute("role") === "treeitem" ? (el.querySelector(":scope > .tree-row") ?? el) : el;
    const s = getComputedStyle(shown);
    const outline = s.outlineStyle !== "none" && parseFloat(s.outlineWidth) > 0;
    const shadow = s.boxShadow !== "none" && s.boxShadow !== "";
    const desc = `${el.tagName.toLowerCase()}${el.className ? "." + String(el.className).split(" ").join(".") : ""} "${(el.getAttribute("aria-label") || el.textContent || "").trim().slice(0, 30)}"`;
    return { desc, visible: outline || shadow };
  });
}

test("keyboard: Tab through the shell and the page view, focus always visible", async ({ page, en, user }) => {
  void user;
  await seed(page);
  await page.goto("/app/deploy-runbook");
  await expect(page.locator(".page-content")).toContainText("Steps to ship");
  // A skip link comes first and leads to the main content.
  await page.keyboard.press("Tab");
  const skip = page.getByRole("link", { name: en["nav.skip_to_content"] });
  await expect(skip).toBeFocused();
  expect((await focusVisible(page)).visible).toBe(true);

  const seen: string[] = [];
  const invisible: string[] = [];
  for (let i = 0; i < 40; i++) {
    await page.keyboard.press("Tab");
    const f = await focusVisible(page);
    seen.push(f.desc);
    if (!f.visible) invisible.push(f.desc);
  }
  expect(invisible, `focused without a visible indicator:\n${invisible.join("\n")}`).toEqual([]);
  // The walk reached the header, the tree and the page's own controls.
  const walk = seen.join("\n");
  expect(walk).toContain("search-input");
  expect(walk).toContain("tree-item");
  expect(walk).toContain(en["page.edit"]!);
  // Enter on the skip link moves focus into the main content.
  await page.goto("/app/deploy-runbook");
  await expect(page.locator(".page-content")).toContainText("Steps to ship");
  await page.keyboard.press("Tab");
  await expect(skip).toBeFocused();
  await page.keyboard.press("Enter");
  await expect(page.locator("#main")).toBeFocused();
  await page.keyboard.press("Tab");
  expect(await page.evaluate(() => !!document.activeElement?.closest("#main"))).toBe(true);
});
