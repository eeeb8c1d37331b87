// Checklists are ticked in the page view: a click (or Space) on a box toggles exactly that
// `- [ ]` / `- [x]` in the markdown and saves it as a normal save — `base_revision` the
// revision on screen, no `title` (the page keeps its title) — and when someone saved in
// between (409), nothing is overwritten: the page reloads and says so.
import type { Page } from "@playwright/test";
import { createPage, errorLine, expect, test } from "../fixtures";

const raw = async (page: Page, slug: string) => (await page.request.get(`/api/pages/${slug}/raw`)).text();
const isPut = (slug: string) => (r: { method(): string; url(): string }) =>
  r.method() === "PUT" && new URL(r.url()).pathname === `/api/pages/${slug}`;

// Front matter first (the boxes' lines are counted in the whole source), a heading that
// differs from the title, a nested item and a box in a quote.
const CONTENT = `---
summary: "What to bring"
---
# Trip

- [ ] passport
- [x] tickets
- [ ] charger
  - [ ] cable
> - [ ] quoted box

Not a box: - [ ] in running text.
`;

test("ticking a box saves exactly that box, against the revision shown, keeping the title", async ({ page, user }) => {
  void user;
  const created = await createPage(page.request, { title: "Packing", slug: "packing", content: CONTENT });
  await page.goto("/app/packing");
  await expect(page.locator(".page-title")).toHaveText("Packing");
  const box = (name: string) => page.locator(".page-content").getByRole("checkbox", { name, exact: true });
  await expect(box("charger")).not.toBeChecked();
  await expect(box("tickets")).toBeChecked();
  await expect(box("charger")).toBeEnabled();

  const put = page.waitForRequest(isPut("packing"));
  await box("charger").click();
  const body = (await put).postDataJSON();
  expect(body.base_revision).toBe(created.revision);
  expect(body).not.toHaveProperty("title");
  await expect.poll(() => raw(page, "packing")).toBe(CONTENT.replace("- [ ] charger", "- [x] charger"));
  await expect(box("charger")).toBeChecked();
  // A save like any other, which leaves the title alone.
  const saved = await (await page.request.get("/api/pages/packing")).json();
  expect(saved.title).toBe("Packing");
  await expect(page.locator(".page-title")).toHaveText("Packing");

  // Unticking, nested and quoted boxes, by keyboard too — each builds on the last save.
  await box("tickets").click();
  await expect.poll(() => raw(page, "packing")).toContain("- [ ] tickets");
  await expect(box("cable")).toBeEnabled(); // one save at a time
  await box("cable").focus();
  await page.keyboard.press("Space");
  await expect.poll(() => raw(page, "packing")).toContain("  - [x] cable");
  // The focus stays on the box (the saved text is rendered anew), so Tab goes on from it.
  await expect(box("cable")).toBeChecked();
  await expect(box("cable")).toBeFocused();
  await expect(box("cable")).toBeEnabled();
  await page.keyboard.press("Tab");
  await expect(box("quoted box")).toBeFocused();
  await box("quoted box").click();
  await expect
    .poll(() => raw(page, "packing"))
    .toBe(
      CONTENT.replace("- [ ] charger", "- [x] charger")
        .replace("- [x] tickets", "- [ ] tickets")
        .replace("- [ ] cable", "- [x] cable")
        .replace("> - [ ] quoted box", "> - [x] quoted box"),
    );
  const history = (await (await page.request.get("/api/pages/packing/history")).json()).items;
  expect(history.length).toBe(5);
  expect((await (await page.request.get("/api/pages/packing")).json()).title).toBe("Packing");
  await expect(errorLine(page).alert).toHaveCount(0);
});

test("quick ticks one after another all go in, each on the last one's revision", async ({ page, user }) => {
  void user;
  const items = ["one", "two", "three", "four", "five"];
  await createPage(page.request, { title: "Quick", slug: "quick", content: items.map((i) => `- [ ] ${i}`).join("\n") + "\n" });
  await page.goto("/app/quick");
  const box = (name: string) => page.locator(".page-content").getByRole("checkbox", { name, exact: true });
  // Each click as soon as the boxes take one (while the view reloads from the last).
  for (const item of items) await box(item).click();
  await expect.poll(() => raw(page, "quick")).toBe(items.map((i) => `- [x] ${i}`).join("\n") + "\n");
  for (const item of items) await expect(box(item)).toBeChecked();
  await expect(errorLine(page).alert).toHaveCount(0);
  expect((await (await page.request.get("/api/pages/quick/history")).json()).items.length).toBe(6);
});

test("a tick on a page changed meanwhile overwrites nothing: reloaded, and the person is told", async ({ page, en, guard, user }) => {
  void user;
  guard.allowed.push(/WebSocket/);
  // A view that has not taken the change in: its following of the page is cut (else the
  // other save would show before the tick).
  await page.routeWebSocket(/\/watch/, (ws) => ws.close());
  await createPage(page.request, { title: "Chores", slug: "chores", content: "# Chores\n\n- [ ] dishes\n- [ ] laundry\n" });
  await page.goto("/app/chores");
  const box = (name: string) => page.locator(".page-content").getByRole("checkbox", { name, exact: true });
  await expect(box("dishes")).toBeEnabled();
  // Someone else adds an item and ticks the laundry.
  const theirs = "# Chores\n\n- [ ] dishes\n- [x] laundry\n- [ ] windows\n";
  expect((await page.request.put("/api/pages/chores", { data: { content: theirs } })).status()).toBe(200);

  const answered = page.waitForResponse((r) => isPut("chores")(r.request()));
  await box("dishes").click();
  expect((await answered).status()).toBe(409);
  const { alert, message } = errorLine(page);
  await expect(message).toHaveText(en["page.checklist.conflict"]!);
  await expect(alert).toBeVisible();
  // Theirs is kept, and now on screen; our tick did not go in.
  expect(await raw(page, "chores")).toBe(theirs);
  await expect(box("windows")).toBeVisible();
  await expect(box("laundry")).toBeChecked();
  await expect(box("dishes")).not.toBeChecked();

  // Ticking again works, on their revision.
  await box("dishes").click();
  await expect.poll(() => raw(page, "chores")).toBe("# Chores\n\n- [x] dishes\n- [x] laundry\n- [ ] windows\n");
  await expect(alert).toHaveCount(0);
});

test("the editor's preview keeps its boxes read-only", async ({ page, user }) => {
  void user;
  await createPage(page.request, { title: "Read Only", slug: "read-only", content: "# Read Only\n\n- [ ] item\n" });
  await page.goto("/app/read-only/edit");
  await expect(page.locator(".editor-preview").getByRole("checkbox", { name: "item" })).toBeDisabled();
});
