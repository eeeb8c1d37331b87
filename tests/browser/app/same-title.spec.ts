// Two pages may share a title (CONTRACT §5): the new-page editor shows the address the
// page will get — the first free "-2", "-3"… when the title's own is taken — and lets
// the person choose another before the first save (a taken or invalid one is said and
// blocks saving); once saved the field is gone. A wanted page made from a broken link
// takes the link's exact text as its title.
import type { Page } from "@playwright/test";
import { replaceText, source } from "../editing";
import { axe, createPage, expect, fmt, pageUrl, test } from "../fixtures";

test("a second “Onboarding” under another parent gets the next free address, shown before saving", async ({ page, en, user }) => {
  await createPage(page.request, { title: "Onboarding", content: "# Onboarding\n\nFor everyone.\n" });
  await createPage(page.request, { title: "Engineering", content: "# Engineering\n" });

  await page.goto("/app/engineering");
  await page.getByRole("link", { name: `+ ${en["page.new_child"]}` }).click();
  const address = page.getByLabel(en["editor.address"]!, { exact: true });
  const note = page.getByTestId("address-note");
  const save = page.getByRole("button", { name: en["page.save"], exact: true });
  await expect(page.getByTestId("new-address")).toContainText(`/app/@${user.workspace}/`);

  // The title's own address is taken: the field shows the one the page will get, and why.
  await page.getByLabel(en["page.title_placeholder"]!).fill("Onboarding");
  await expect(address).toHaveValue("onboarding-2");
  await expect(note).toHaveText(fmt(en["editor.address_numbered"]!, { taken: "onboarding" }));

  // Another address can be chosen; a taken or invalid one is said and blocks saving.
  await address.fill("onboarding");
  await expect(note).toHaveText(en["editor.address_taken"]!);
  await expect(save).toBeDisabled();
  await axe(page, "new page, address taken");
  await address.fill("-engineers");
  await expect(note).toHaveText(en["editor.address_invalid"]!);
  await expect(save).toBeDisabled();
  await address.fill("engineering-onboarding");
  await expect(note).toHaveCount(0);
  await expect(save).toBeEnabled();
  // Emptied, the field follows the title again.
  await address.fill("");
  await expect(address).toHaveValue("onboarding-2");

  await replaceText(page, "# Onboarding\n\nFor engineers.\n");
  await save.click();
  await expect(page).toHaveURL(pageUrl("onboarding-2", "", user.workspace));
  await expect(page.locator(".page-content")).toContainText("For engineers.");
  const made = await (await page.request.get("/api/pages/onboarding-2")).json();
  expect(made.title).toBe("Onboarding");
  expect(made.parent).toBe("engineering");
  // The first one is untouched.
  expect((await (await page.request.get("/api/pages/onboarding")).json()).content).toContain("For everyone.");

  // Once saved, the address changes only by a rename: the editor has no field for it.
  await page.goto("/app/onboarding-2/edit");
  await expect(source(page)).toContainText("For engineers.");
  await expect(page.getByTestId("new-address")).toHaveCount(0);
});

test("a chosen address is the page's; a wanted page takes its link's exact text as its title", async ({ page, en, user }) => {
  await createPage(page.request, { title: "Planning", content: "# Planning\n\nSee [[Capacity Plan]] for the numbers.\n" });
  // The link is followed before the page tree has arrived (in a large wiki it comes a
  // while after the page), so the app cannot know yet that the page is missing.
  let release = () => {};
  const treeHeld = new Promise<void>((resolve) => (release = resolve));
  await page.route(
    (url) => url.pathname === "/api/pages",
    async (route) => {
      await treeHeld;
      await route.fallback();
    },
  );
  await page.goto("/app/planning");
  const wanted = page.locator(".page-content").getByRole("link", { name: "Capacity Plan" });
  await wanted.click();
  const create = page.getByRole("link", { name: fmt(en["page.create_named"]!, { title: "Capacity Plan" }) });
  await expect(page.getByTestId("page-missing").getByRole("heading")).toHaveText("Capacity Plan");
  release();
  await create.click();

  await expect(page.getByLabel(en["page.title_placeholder"]!)).toHaveValue("Capacity Plan");
  const address = page.getByLabel(en["editor.address"]!, { exact: true });
  await expect(address).toHaveValue("capacity-plan");
  await replaceText(page, "Servers we need next year.\n");
  await page.getByRole("button", { name: en["page.save"], exact: true }).click();
  await expect(page).toHaveURL(pageUrl("capacity-plan", "", user.workspace));
  const made = await (await page.request.get("/api/pages/capacity-plan")).json();
  expect(made.title).toBe("Capacity Plan");
  // The link is no longer broken.
  await page.goto("/app/planning");
  await expect(page.locator(".page-content").getByRole("link", { name: "Capacity Plan" })).not.toHaveClass(/wikilink-missing/);

  // A new page at an address of the person's choosing.
  await page.goto("/app/-/new");
  await page.getByLabel(en["page.title_placeholder"]!).fill("Quarterly Review");
  await expect(address).toHaveValue("quarterly-review");
  await address.fill("q3-review");
  await replaceText(page, "Numbers.\n");
  await page.getByRole("button", { name: en["page.save"], exact: true }).click();
  await expect(page).toHaveURL(pageUrl("q3-review", "", user.workspace));
  expect((await (await page.request.get("/api/pages/q3-review")).json()).title).toBe("Quarterly Review");
});
