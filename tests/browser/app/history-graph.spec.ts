// The history's diff on a phone and within a line, and the graph's names at 85 pages.
import { createPage, expect, pageUrl, test } from "../fixtures";

test("on a phone the diff is inline; changed words are marked in both layouts", async ({ page, user }) => {
  void user;
  const made = await createPage(page.request, { title: "Runbook", content: "# Runbook\n\nRestart the server, then check the status page.\n\nDone.\n" });
  const res = await page.request.put("/api/pages/runbook", {
    data: { content: "# Runbook\n\nRestart the proxy, then check the status page.\n\nDone.\n", base_revision: made.revision },
  });
  expect(res.ok()).toBeTruthy();

  // Side by side was chosen on a wide screen; a phone shows the diff inline all the same.
  await page.addInitScript(() => localStorage.setItem("cairn.diffLayout", "split"));
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto("/app/runbook/history");
  await page.getByTestId("history-list").locator("tbody tr").first().getByRole("link").click();
  await expect(page).toHaveURL(pageUrl("runbook", "history/[0-9a-f]+"));
  const inline = page.getByTestId("diff");
  await expect(inline).toBeVisible();
  await expect(page.getByTestId("diff-split")).toHaveCount(0);
  await expect(inline.locator("del.word-change")).toHaveText(["server"]);
  await expect(inline.locator("ins.word-change")).toHaveText(["proxy"]);
  await expect(inline.locator(".del")).toHaveText(["-Restart the server, then check the status page."]);
  expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);

  // A wider window brings the chosen layout back, with the same marks.
  await page.setViewportSize({ width: 1280, height: 800 });
  const split = page.getByTestId("diff-split");
  await expect(split).toBeVisible();
  await expect(split.locator("td.del del.word-change")).toHaveText(["server"]);
  await expect(split.locator("td.add ins.word-change")).toHaveText(["proxy"]);
});

test("the graph of 85 pages names only what is pointed at, focused, opened for, or zoomed into", async ({ page, en, user }) => {
  void user;
  // A hub linking to four pages, and 80 more pages in a chain.
  await createPage(page.request, { title: "Hub", content: "[[Page 1]] [[Page 2]] [[Page 3]] [[Page 4]]" });
  for (let i = 1; i <= 84; i++) {
    await createPage(page.request, { title: `Page ${i}`, content: i > 4 && i < 84 ? `Next: [[Page ${i + 1}]]` : "A page." });
  }
  const near = ["Hub", "Page 1", "Page 2", "Page 3", "Page 4"];

  await page.goto("/app/-/graph");
  const graph = page.getByTestId("graph");
  await expect(graph.getByRole("link")).toHaveCount(85);
  const labels = graph.locator("text");
  await expect(labels).toHaveCount(0);

  // Pointing at a page names it and its neighbours only.
  const hub = graph.getByRole("link", { name: "Hub", exact: true });
  await hub.locator("circle").hover();
  await expect(labels).toHaveCount(5);
  expect((await labels.allTextContents()).sort()).toEqual(near);
  await page.mouse.move(1, 1);
  await expect(labels).toHaveCount(0);

  // So does the keyboard's focus.
  await graph.getByRole("link", { name: "Page 40", exact: true }).focus();
  await expect(labels).toHaveCount(3);
  expect((await labels.allTextContents()).sort()).toEqual(["Page 39", "Page 40", "Page 41"]);
  await page.getByRole("button", { name: en["graph.fit"] }).focus();
  await expect(labels).toHaveCount(0);

  // Zoomed in far enough, every page is named.
  const viewport = page.getByTestId("graph-viewport");
  const scale = async () => Number(/scale\(([\d.]+)\)/.exec((await viewport.getAttribute("transform"))!)![1]);
  for (let i = 0; i < 15 && (await scale()) < 1.4; i++) await page.getByRole("button", { name: en["graph.zoom_in"] }).click();
  await expect(labels).toHaveCount(85);

  // Opened from a page, the graph names that page's neighbourhood.
  await page.goto("/app/hub");
  await page.getByRole("navigation", { name: en["nav.pages"] }).getByRole("link", { name: en["nav.graph"] }).click();
  await expect(page).toHaveURL(/\/app\/-\/graph\?page=hub$/);
  await expect(graph.getByRole("link")).toHaveCount(85);
  await expect(labels).toHaveCount(5);
  expect((await labels.allTextContents()).sort()).toEqual(near);
});
