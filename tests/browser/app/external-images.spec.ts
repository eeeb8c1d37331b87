// Images from other sites (`![](https://…)`). By default the app's CSP
// allows https images and the page shows them, fetched lazily and without a Referer.
// With BLOCK_EXTERNAL_IMAGES=1 the server answers `external_images: false` in
// /api/system and the page shows a placeholder naming the link instead, requesting
// nothing. The fixtures refuse every request outside the server's origin, so the first
// test answers the image's request itself (aborted: the <img> and its address are what
// is checked); the second cannot start a server of its own with the setting, so it
// gives the app that answer of /api/system (the renderer's unit test,
// web/src/markdown/externalImages.test.ts, covers the same rule case by case).
import { createPage, expect, fmt, test } from "../fixtures";

const IMAGE = "https://images.example.org/chart.png";

test("by default an https image is shown, without a Referer", async ({ page, user, guard }) => {
  void user;
  const asked: string[] = [];
  await page.route("https://images.example.org/**", (route) => {
    asked.push(route.request().url());
    return route.abort();
  });
  // The aborted fetch is reported on the console; it is this test's own doing.
  guard.allowed.push(/Failed to load resource: net::ERR_FAILED/);
  await createPage(page.request, { title: "Report", content: `# Report\n\n![Quarterly chart](${IMAGE})\n` });
  await page.goto("/app/report");
  const img = page.locator(".page-content img");
  await expect(img).toHaveAttribute("src", IMAGE);
  await expect(img).toHaveAttribute("alt", "Quarterly chart");
  await expect(img).toHaveAttribute("referrerpolicy", "no-referrer");
  await expect(page.locator(".image-external")).toHaveCount(0);
  // Asked of the other site (and answered here by an abort), never of our server.
  await expect.poll(() => asked.includes(IMAGE)).toBe(true);
});

test("when the server blocks them, a placeholder names the link and nothing is requested", async ({ page, en, user }) => {
  void user;
  await page.route("**/api/system", async (route) => {
    const response = await route.fetch();
    await route.fulfill({ response, json: { ...(await response.json()), external_images: false } });
  });
  const outside: string[] = [];
  page.on("request", (r) => r.url().includes("images.example.org") && outside.push(r.url()));
  await createPage(page.request, { title: "Report", content: `# Report\n\nBefore ![Quarterly chart](${IMAGE}) after.\n` });
  await page.goto("/app/report");
  const content = page.locator(".page-content");
  const placeholder = content.locator(".image-external");
  await expect(placeholder).toContainText(fmt(en["image.external_blocked_named"]!, { name: "Quarterly chart" }));
  const link = placeholder.getByRole("link", { name: IMAGE });
  await expect(link).toHaveAttribute("href", IMAGE);
  await expect(link).toHaveAttribute("target", "_blank");
  await expect(content.locator("img")).toHaveCount(0);
  await expect(content).toContainText("Before");
  expect(outside).toEqual([]);
});
