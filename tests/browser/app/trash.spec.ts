// The trash keeps what one delete took together: deleting a page with
// subpages asks once, naming them, and trashes the subtree with one request; the trash
// shows those pages as one group (the top page, its subpages nested under it), any of
// them can be previewed rendered, and one action restores the whole group in place.
import { createPage, expect, fmt, test } from "../fixtures";

test("a page with subpages: asked once, trashed as one group, previewed, restored together", async ({ page, en, user }) => {
  void user;
  await createPage(page.request, { title: "Handbook", content: "# Handbook\n\nThe root." });
  await createPage(page.request, { title: "Chapter One", content: "# Chapter One", parent: "handbook" });
  const sectionA = { title: "Section A", content: "# Section A\n\nSome **bold words** here.", parent: "chapter-one" };
  await createPage(page.request, sectionA);
  await createPage(page.request, { title: "Chapter Two", content: "# Chapter Two", parent: "handbook" });
  await createPage(page.request, { title: "Loose Note", content: "# Loose Note" });

  await page.goto("/app/handbook");
  await expect(page.getByRole("tree").getByRole("link", { name: "Handbook" })).toBeVisible();
  const deletes: string[] = [];
  page.on("request", (r) => r.method() === "DELETE" && deletes.push(r.url()));
  await page.getByTestId("page-more").click();
  await page.getByRole("menuitem", { name: en["page.delete"] }).click();

  // One question, which names every subpage.
  const ask = page.getByRole("dialog", { name: en["common.confirm"] });
  await expect(ask).toContainText(fmt(en["page.delete_with_subpages_confirm"]!, { title: "Handbook", count: 3 }));
  await expect(ask.getByRole("listitem")).toHaveText(["Chapter One", "Section A", "Chapter Two"]);
  const gone = page.waitForResponse((r) => r.request().method() === "DELETE" && r.url().includes("/api/pages/handbook"));
  await ask.getByRole("button", { name: en["page.delete"] }).click();
  expect((await gone).status()).toBe(204);
  await expect(page.getByRole("dialog")).toHaveCount(0);
  await expect(page.getByRole("tree").getByRole("link", { name: "Handbook" })).toHaveCount(0);
  await expect(page).not.toHaveURL(/handbook/); // the app has moved on from the deleted page
  expect(deletes).toHaveLength(1);
  expect(new URL(deletes[0]!).searchParams.get("recursive")).toBe("true");

  // A page deleted on its own is a group of its own.
  expect((await page.request.delete("/api/pages/loose-note")).status()).toBe(204);

  await page.getByRole("link", { name: en["nav.trash"] }).first().click();
  const list = page.getByTestId("trash-list");
  await expect(list.locator("tbody")).toHaveCount(2);
  const group = list.locator("tbody", { has: page.getByText("Handbook", { exact: true }) });
  await expect(group.locator("tr")).toHaveCount(4);
  // The top page first, its subpages under it, each saying what it went with.
  await expect(group.locator("tr strong")).toHaveText(["Handbook", "Chapter One", "Section A", "Chapter Two"]);
  await expect(group.locator("tr").first()).toContainText(fmt(en["trash.with_subpages_other"]!, { count: 3 }));
  const sub = group.locator("tr", { hasText: "Section A" });
  await expect(sub).toContainText(fmt(en["trash.subpage_of"]!, { title: "Handbook" }));
  // Restoring and purging are the group's: offered on its top page only.
  await expect(group.getByRole("button", { name: en["trash.restore"] })).toHaveCount(1);
  await expect(group.getByRole("button", { name: en["trash.delete_forever"] })).toHaveCount(1);
  await expect(list.locator("tbody", { hasText: "Loose Note" }).locator("tr")).toHaveCount(1);

  // Preview: the trashed page rendered, before restoring anything.
  await group.getByRole("button", { name: `${en["trash.preview"]}: Section A` }).click();
  const preview = page.getByRole("dialog", { name: fmt(en["trash.preview_title"]!, { title: "Section A" }) });
  await expect(preview.locator("strong")).toHaveText("bold words");
  await expect(preview).toContainText("Some bold words here.");
  await expect(preview).not.toContainText("**");
  await preview.getByRole("button", { name: en["common.close"], exact: true }).click();
  await expect(preview).toHaveCount(0);
  expect((await page.request.get("/api/pages/section-a")).status()).toBe(404); // still in the trash

  // One action restores the group, in its places.
  await group.getByRole("button", { name: `${en["trash.restore"]}: Handbook` }).click();
  await expect(page.getByRole("status")).toContainText(fmt(en["trash.restored"]!, { title: "Handbook" }));
  await expect(list.locator("tbody")).toHaveCount(1);
  await expect(list).toContainText("Loose Note");
  const parents = await Promise.all(
    ["handbook", "chapter-one", "section-a", "chapter-two"].map(
      async (s) => (await (await page.request.get(`/api/pages/${s}`)).json()).parent,
    ),
  );
  expect(parents).toEqual([null, "handbook", "chapter-one", "handbook"]);
  await expect(page.getByRole("tree").getByRole("link", { name: "Handbook" })).toBeVisible();
});

test("a page without subpages is asked about plainly and trashed without recursion", async ({ page, en, user }) => {
  void user;
  await createPage(page.request, { title: "Single", content: "# Single" });
  await page.goto("/app/single");
  await page.getByTestId("page-more").click();
  await page.getByRole("menuitem", { name: en["page.delete"] }).click();
  const ask = page.getByRole("dialog", { name: en["common.confirm"] });
  await expect(ask).toContainText(fmt(en["page.delete_confirm"]!, { title: "Single" }));
  await expect(ask.getByRole("list")).toHaveCount(0);
  const gone = page.waitForRequest((r) => r.method() === "DELETE");
  await ask.getByRole("button", { name: en["page.delete"] }).click();
  expect(new URL((await gone).url()).searchParams.get("recursive")).toBeNull();
  await expect(page.getByRole("tree").getByRole("link", { name: "Single" })).toHaveCount(0);
});

test("deleting a group forever names its subpages once and purges them all", async ({ page, en, user }) => {
  void user;
  await createPage(page.request, { title: "Archive", content: "# Archive" });
  await createPage(page.request, { title: "Archive 2019", content: "# Archive 2019", parent: "archive" });
  expect((await page.request.delete("/api/pages/archive?recursive=true")).status()).toBe(204);

  await page.goto("/app/-/trash");
  const group = page.getByTestId("trash-list").locator("tbody");
  await expect(group.locator("tr")).toHaveCount(2);
  await group.getByRole("button", { name: `${en["trash.delete_forever"]}: Archive` }).click();
  const ask = page.getByRole("dialog", { name: en["common.confirm"] });
  await expect(ask).toContainText(fmt(en["trash.delete_group_forever_confirm"]!, { title: "Archive", count: 1 }));
  await expect(ask.getByRole("listitem")).toHaveText(["Archive 2019"]);
  await ask.getByRole("button", { name: en["trash.delete_forever"] }).click();
  await expect(page.getByTestId("trash-empty")).toHaveText(en["trash.empty"]!);
  expect((await (await page.request.get("/api/trash")).json()).items).toEqual([]);
});
