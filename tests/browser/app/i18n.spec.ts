// Every visible string comes from the catalogue: in each language, no screen shows a
// raw message key (text, placeholders, labels, tooltips), and the app asks the catalogue
// for no key it lacks (t() warns of each such key on the console; the fixtures' guard
// fails every spec on one, and this spec names the screen where it happened).
import type { Page } from "@playwright/test";
import { createPage, expect, messages, test } from "../fixtures";

async function visibleKeys(page: Page, keys: Set<string>): Promise<string[]> {
  const texts = await page.evaluate(() => {
    const out = [document.body.innerText, document.title];
    for (const el of document.querySelectorAll("[placeholder], [aria-label], [title], option")) {
      for (const a of ["placeholder", "aria-label", "title"]) {
        const v = el.getAttribute(a);
        if (v) out.push(v);
      }
      if (el.tagName === "OPTION") out.push(el.textContent ?? "");
    }
    return out.join("\n");
  });
  const found = texts.match(/\b[a-z_]+\.[a-z_.]+\b/g) ?? [];
  return [...new Set(found.filter((w) => keys.has(w)))];
}

for (const lang of ["de", "fr", "es", "ja"]) {
  test(`no raw message keys in ${lang}`, async ({ page, en, user }) => {
    void user;
    const keys = new Set(Object.keys(en));
    const missing: string[] = [];
    page.on("console", (msg) => {
      if (msg.type() === "warning" && msg.text().startsWith("i18n: no message")) missing.push(msg.text());
    });
    const m = await messages(page.request, lang);
    await createPage(page.request, { title: "Topic", content: "# Topic\n\n## Part\n\ntext [[Nowhere]] #tagged\n\n## More\n" });
    await createPage(page.request, { title: "Sub Topic", parent: "topic", content: "sub" });
    await page.request.put("/api/pages/topic", { data: { content: "# Topic\n\n## Part\n\nnew text [[Nowhere]] #tagged\n\n## More\n" } });

    await page.goto("/app/topic");
    await page.getByTestId("user-menu").click();
    await page.locator("#user-language").selectOption(lang);
    await expect(page.locator("html")).toHaveAttribute("lang", lang);
    await expect(page.getByRole("link", { name: `+ ${m["page.new"]}` })).toBeVisible();
    await page.keyboard.press("Escape");

    const check = async (where: string) => {
      expect(await visibleKeys(page, keys), `raw keys on ${where}`).toEqual([]);
      expect(missing, `keys missing from the catalogue on ${where}`).toEqual([]);
    };
    await check("page view");
    await page.getByTestId("toggle-suggestions").click();
    await expect(page.getByTestId("intel-mode")).toHaveCount(3);
    await check("suggestions");
    await page.getByTestId("user-menu").click();
    await check("user menu");
    await page.keyboard.press("Escape");
    await page.getByTestId("workspace-switcher").click();
    await check("workspace menu");
    await page.keyboard.press("Escape");

    await page.getByRole("searchbox").fill("text");
    await expect(page.getByRole("listbox")).toBeVisible();
    await check("search popup");
    await page.getByRole("link", { name: m["search.all_results"] }).click();
    await expect(page.locator(".results")).toBeVisible();
    await check("search page");

    await page.goto("/app/topic/edit");
    await expect(page.getByTestId("source-editor")).toBeVisible();
    await check("editor");

    await page.goto("/app/topic/history");
    await page.getByTestId("history-list").locator("tbody tr").first().getByRole("link").click();
    await expect(page.getByTestId("diff")).toBeVisible();
    await check("history");
    await page.getByRole("button", { name: m["history.diff_side_by_side"] }).click();
    await expect(page.getByTestId("diff-split")).toBeVisible();
    await check("side-by-side diff");
    await page.getByTestId("history-list").locator("tbody tr").last().getByRole("link").click();
    await page.getByRole("button", { name: m["history.erase"] }).click();
    await expect(page.getByRole("dialog", { name: m["history.erase_title"] })).toBeVisible();
    await check("erase dialog");
    await page.keyboard.press("Escape");

    await page.goto("/app/nowhere");
    await expect(page.getByTestId("page-missing")).toBeVisible();
    await check("missing page");

    await page.goto("/app/-/trash");
    await expect(page.getByTestId("trash-empty")).toHaveText(m["trash.empty"]!);
    await check("trash");

    await page.goto("/app/-/settings");
    await page.getByRole("button", { name: m["settings.tokens.create"] }).waitFor();
    await page.getByLabel(m["settings.tokens.name"]!).fill("tok");
    await page.getByRole("button", { name: m["settings.tokens.create"] }).click();
    await expect(page.getByTestId("token-list")).toBeVisible();
    await check("settings");

    await page.goto("/app/-/workspace");
    await page.getByLabel(m["settings.webhooks.url"]!).fill("https://8.8.8.8/hook");
    await page.getByRole("button", { name: m["settings.webhooks.create"] }).click();
    await expect(page.getByTestId("webhook-list")).toBeVisible();
    await createPage(page.request, { title: "Later", content: "an event for the webhook" });
    await page.getByTestId("webhook-list").getByRole("button", { name: m["settings.webhooks.deliveries"] }).click();
    await expect(page.getByTestId(/^deliveries-/).locator("tbody tr").first()).toBeVisible();
    await check("workspace settings");
    await page.getByRole("button", { name: m["workspace.delete"] }).click();
    await check("delete workspace dialog");
    await page.keyboard.press("Escape");

    await page.keyboard.press("Control+k");
    await page.getByRole("combobox", { name: m["palette.title"] }).fill("Top");
    await expect(page.getByRole("option", { name: /Topic/ }).first()).toBeVisible();
    await check("command palette");
    await page.keyboard.press("Escape");

    await page.goto("/app/-/insights");
    await expect(page.getByTestId("insights-totals")).toBeVisible();
    await page.getByRole("button", { name: /#tagged/ }).click();
    await expect(page.getByTestId("tag-pages").getByRole("link")).toHaveCount(1);
    await check("insights");

    await page.goto("/app/-/graph");
    await expect(page.getByTestId("graph").getByRole("link", { name: "Topic", exact: true })).toBeVisible();
    await check("graph");

    await page.goto("/app/topic");
    await page.getByTestId("page-more").click();
    await page.getByRole("menuitem", { name: m["page.move"], exact: true }).click();
    await expect(page.getByRole("combobox", { name: m["page.move.parent"] })).toBeVisible(); // its own chunk
    await check("move dialog");
    await page.keyboard.press("Escape");

    // Signed out, the chosen language stays for the sign-in and register screens.
    await page.getByTestId("user-menu").click();
    await page.getByRole("menuitem", { name: m["nav.sign_out"] }).click();
    await expect(page.getByRole("button", { name: m["auth.login.submit"] })).toBeVisible();
    await check("login");
    await page.goto("/app/register");
    await expect(page.getByRole("button", { name: m["auth.register.submit"] })).toBeVisible();
    await check("register");
  });
}
