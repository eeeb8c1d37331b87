// Counts read right in every language ("1 linking page", not "1 linking pages"): each
// message whose words change with the number has a form per plural category of the
// language (Intl.PluralRules), and the app picks it. And adding a member says so.
import { createPage, expect, fmt, messages, registerUser, test } from "../fixtures";

test("counts take the plural form of the reader's language", async ({ page, en, user }) => {
  void user;
  await createPage(page.request, { title: "Glossary", content: "# Glossary" });
  await createPage(page.request, { title: "Runbook", content: "# Runbook" });
  await createPage(page.request, { title: "Deploy", content: "See [[Glossary]] and [[Runbook]]." });
  await createPage(page.request, { title: "Setup", content: "See [[Runbook]]." });

  await page.goto("/app/-/insights");
  const linked = page.getByRole("region", { name: en["intel.most_linked"] });
  await expect(linked.getByRole("listitem")).toHaveText([
    `Runbook ${fmt(en["insights.link_count_other"]!, { count: 2 })}`,
    `Glossary ${fmt(en["insights.link_count_one"]!, { count: 1 })}`,
  ]);
  expect(en["insights.link_count_one"]).toBe("{count} linking page");
  await expect(page.getByTestId("insights-totals")).toContainText(fmt(en["count.pages_other"]!, { count: 4 }));

  // German, French (where 0 and 1 are "one") and Japanese (one form for every number).
  for (const lang of ["de", "fr", "ja"]) {
    const m = await messages(page.request, lang);
    await page.getByTestId("user-menu").click();
    await page.locator("#user-language").selectOption(lang);
    await expect(page.locator("html")).toHaveAttribute("lang", lang);
    await page.keyboard.press("Escape");
    const region = page.getByRole("region", { name: m["intel.most_linked"] });
    await expect(region.getByRole("listitem")).toHaveText([
      `Runbook ${fmt(m["insights.link_count_other"]!, { count: 2 })}`,
      `Glossary ${fmt(m[lang === "ja" ? "insights.link_count_other" : "insights.link_count_one"]!, { count: 1 })}`,
    ]);
  }
  const de = await messages(page.request, "de");
  expect([de["insights.link_count_one"], de["insights.link_count_other"]]).toEqual(["{count} verlinkende Seite", "{count} verlinkende Seiten"]);
});

test("adding and removing a member says who, and as what", async ({ page, playwright, baseURL, en, user }) => {
  void user;
  const other = await playwright.request.newContext({ baseURL });
  const alice = await registerUser(other, "Alice Example");
  await page.goto("/app/-/workspace");
  const members = page.getByRole("region", { name: en["workspace.members"] });
  await members.getByLabel(en["workspace.add_member_email"]!).fill(alice.email);
  await members.getByRole("button", { name: en["workspace.add_member"] }).click();
  await expect(members.getByRole("status")).toHaveText(fmt(en["workspace.member_added_member"]!, { name: "Alice Example" }));
  expect(en["workspace.member_added_member"]).toBe("Added {name} as a member.");

  const row = page.getByTestId("member-list").getByRole("row", { name: /Alice Example/ });
  await row.getByRole("button", { name: `${en["workspace.remove_member"]}: ${alice.email}` }).click();
  await page.getByRole("dialog", { name: en["common.confirm"] }).getByRole("button", { name: en["workspace.remove_member"] }).click();
  await expect(members.getByRole("status")).toHaveText(fmt(en["workspace.member_removed"]!, { name: "Alice Example" }));
  await expect(row).toHaveCount(0);
  await other.dispose();
});
