// The suggestions panel of a page: suggested links, tags and a summary, each with the
// answer's mode; applying a link, a tag or the summary is one edit, and the page shows it
// (the summary as front matter `summary:`, shown as a lead paragraph under the title).
import { createPage, expect, fmt, test } from "../fixtures";

test("suggested links, tags and summary; one click applies them", async ({ page, en, user }) => {
  void user;
  await createPage(page.request, { title: "Compost", content: "# Compost\n\nCompost turns kitchen scraps into soil. Worms help the compost heap. #garden" });
  await createPage(page.request, {
    title: "Vegetable Beds",
    content: "# Vegetable Beds\n\nOur vegetable beds need compost and soil every spring. Worms love the soil in the beds. We read about Compost often.\n",
  });
  await page.goto("/app/vegetable-beds");
  const toggle = page.getByTestId("toggle-suggestions");
  await expect(toggle).toHaveAttribute("aria-pressed", "false");
  await toggle.click();
  await expect(toggle).toHaveAttribute("aria-pressed", "true");
  const panel = page.getByRole("complementary", { name: en["intel.suggestions"] });

  // Each part names its mode (tfidf without SEMANTIC_SEARCH).
  await expect(panel.getByTestId("intel-mode")).toHaveCount(3);
  for (const mode of await panel.getByTestId("intel-mode").allTextContents()) {
    expect(mode).toMatch(/tfidf|embedding/);
  }
  await expect(panel.getByTestId("summary")).toContainText("Our vegetable beds need compost");
  const links = panel.getByRole("region", { name: en["intel.suggested_links"] });
  await expect(links).toContainText(fmt(en["intel.reason.mentions"]!, { title: "Compost" }));

  // Apply the link: a "See also" line with [[Compost]]; the page reloads with it.
  await links.getByRole("button", { name: fmt(en["intel.add_link"]!, { title: "Compost" }) }).click();
  const content = page.locator(".page-content");
  await expect(content.getByRole("link", { name: "Compost" })).toBeVisible();
  await expect(content).toContainText("See also:");
  let saved = await (await page.request.get("/api/pages/vegetable-beds")).json();
  expect(saved.content).toMatch(/\nSee also: \[\[Compost\]\]\n$/);
  expect(saved.links).toEqual(["compost"]);
  // Now linked, it is no longer suggested.
  await expect(links.getByRole("button", { name: fmt(en["intel.add_link"]!, { title: "Compost" }) })).toHaveCount(0);

  // Apply a tag: it shows among the page's tags.
  const tags = panel.getByRole("region", { name: en["intel.suggested_tags"] });
  await tags.getByRole("button", { name: fmt(en["intel.add_tag"]!, { tag: "garden" }) }).click();
  await expect(page.getByRole("list", { name: en["page.tags"] })).toContainText("#garden");
  saved = await (await page.request.get("/api/pages/vegetable-beds")).json();
  expect(saved.tags).toContain("garden");
  expect(saved.content).toContain("See also: [[Compost]]");
  await expect(tags.getByRole("button", { name: fmt(en["intel.add_tag"]!, { tag: "garden" }) })).toHaveCount(0);
  let history = (await (await page.request.get("/api/pages/vegetable-beds/history")).json()).items;
  expect(history).toHaveLength(3);

  // Use the summary: it goes into front matter, and the page shows it under its title.
  // The panel shows the summary of the page as it now is (reloaded after the tag).
  const expected: string = (await (await page.request.get("/api/pages/vegetable-beds/summary")).json()).summary;
  expect(expected).toContain("Our vegetable beds need compost");
  const summaryPart = panel.getByRole("region", { name: en["intel.summary"] });
  await expect(summaryPart.getByTestId("summary")).toHaveText(expected);
  await expect(page.getByTestId("page-summary")).toHaveCount(0);
  const useSummary = summaryPart.getByRole("button", { name: en["intel.use_summary"] });
  await expect(useSummary).toBeEnabled();
  await useSummary.click();
  await expect(page.getByTestId("page-summary")).toHaveText(expected);
  await expect(page.locator(".page-title")).toHaveText("Vegetable Beds");
  saved = await (await page.request.get("/api/pages/vegetable-beds")).json();
  expect(saved.content).toMatch(/^---\nsummary: "/);
  expect(saved.content).toContain(`---\nsummary: ${JSON.stringify(expected)}\n---\n# Vegetable Beds\n`);
  expect(saved.content).toContain("See also: [[Compost]]");
  expect(saved.content).toContain("#garden");
  expect(saved.tags).toContain("garden");
  expect(saved.links).toEqual(["compost"]);
  expect(saved.title).toBe("Vegetable Beds");
  // Front matter is not rendered, and the summary does not read it: the same summary.
  await expect(content).not.toContainText("summary:");
  await expect(summaryPart.getByTestId("summary")).toHaveText(expected);
  // Applied once: the button is disabled and says so; the page holds one summary line.
  await expect(useSummary).toBeDisabled();
  await expect(summaryPart).toContainText(en["intel.summary_in_use"]!);
  saved = await (await page.request.get("/api/pages/vegetable-beds")).json();
  expect(saved.content.match(/^summary:/gm)).toHaveLength(1);
  history = (await (await page.request.get("/api/pages/vegetable-beds/history")).json()).items;
  expect(history).toHaveLength(4);
  expect(history[0].message).toBe(en["intel.use_summary"]);
});
