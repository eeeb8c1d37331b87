// The link graph (/app/-/graph): its own chunk, loaded on demand; nodes are links to
// pages; broken links drawn dashed; zoom (buttons, wheel), pan (drag), tag filter.
import { createPage, expect, pageUrl, test } from "../fixtures";

test("graph: lazy chunk, nodes, broken edges, zoom, pan, filter, open a page", async ({ page, en, user }) => {
  void user;
  await createPage(page.request, { title: "Compost", content: "Scraps into soil. #garden" });
  await createPage(page.request, { title: "Hub", content: "See [[Compost]] and [[Missing Thing]]. #garden" });
  await createPage(page.request, { title: "Recipes", content: "Soup. [[Hub]] #kitchen" });

  const chunks: string[] = [];
  page.on("request", (r) => {
    if (/\/assets\/Graph-[^/]+\.js$/.test(r.url())) chunks.push(r.url());
  });
  await page.goto("/app/hub");
  await expect(page.locator(".page-title")).toHaveText("Hub");
  expect(chunks, "the graph chunk is not loaded before it is needed").toEqual([]);

  await page.getByRole("navigation", { name: en["nav.pages"] }).getByRole("link", { name: en["nav.graph"] }).click();
  await expect(page).toHaveURL(/\/app\/-\/graph\?page=hub$/); // opened for the page on screen
  const graph = page.getByTestId("graph");
  await expect(graph.getByRole("link", { name: "Compost" })).toBeVisible();
  expect(chunks).toHaveLength(1);
  await expect(graph.getByRole("link", { name: "Hub" })).toBeVisible();
  await expect(graph.getByRole("link", { name: "Recipes" })).toBeVisible();
  await expect(graph.locator("line.edge")).toHaveCount(3);
  await expect(graph.locator("line.edge-broken")).toHaveCount(1);
  await expect(graph.getByRole("link", { name: "Missing page: missing-thing" })).toHaveClass(/node-missing/);

  // Zoom with the buttons and the wheel, pan by dragging the background.
  const viewport = page.getByTestId("graph-viewport");
  const scale = async () => Number(/scale\(([\d.]+)\)/.exec((await viewport.getAttribute("transform"))!)![1]);
  const start = await scale();
  await page.getByRole("button", { name: en["graph.zoom_in"] }).click();
  await expect.poll(scale).toBeGreaterThan(start);
  await page.getByRole("button", { name: en["graph.zoom_out"] }).click();
  await page.getByRole("button", { name: en["graph.zoom_out"] }).click();
  await expect.poll(scale).toBeLessThan(start);
  const box = (await graph.boundingBox())!;
  await page.mouse.move(box.x + 10, box.y + 10);
  const beforeWheel = await scale();
  await page.mouse.wheel(0, -300);
  await expect.poll(scale).toBeGreaterThan(beforeWheel);
  const before = await viewport.getAttribute("transform");
  await page.mouse.move(box.x + 8, box.y + box.height - 8);
  await page.mouse.down();
  await page.mouse.move(box.x + 120, box.y + box.height - 60, { steps: 5 });
  await page.mouse.up();
  await expect(viewport).not.toHaveAttribute("transform", before!);
  await expect(page).toHaveURL(/\/app\/-\/graph\?page=hub$/); // a pan opens nothing

  // Filter by tag: only #kitchen pages (and none of the links between others).
  await page.getByLabel(en["graph.filter_tag"]!).selectOption("kitchen");
  await expect(graph.getByRole("link")).toHaveCount(1);
  await expect(graph.getByRole("link", { name: "Recipes" })).toBeVisible();
  await page.getByLabel(en["graph.filter_tag"]!).selectOption("");
  await expect(graph.getByRole("link", { name: "Hub" })).toBeVisible();

  // A click on a node opens its page.
  await page.getByRole("button", { name: en["graph.fit"] }).click();
  await graph.getByRole("link", { name: "Compost" }).locator("circle").click();
  await expect(page).toHaveURL(pageUrl("compost"));
  await expect(page.locator(".page-title")).toHaveText("Compost");
});
