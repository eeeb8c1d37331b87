// Small defects, as a person (or their browser's console) sees them.
import { createPage, errorLine, expect, fmt, test } from "../fixtures";

test("an error is said once, in the reader's language", async ({ page, en, user }) => {
  await page.request.post("/api/auth/logout");
  await page.goto("/app/login");
  await page.getByLabel(en["auth.field.email"]!).fill(user.email);
  await page.getByLabel(en["auth.field.password"]!, { exact: true }).fill("not the password");
  await page.getByRole("button", { name: en["auth.login.submit"] }).click();
  const error = errorLine(page);
  await expect(error.alert).toHaveCount(1);
  await expect(error.alert).toHaveText(en["auth.error.invalid_credentials"]!);
});

test("the register screen asks nothing that fails", async ({ page, en }) => {
  const failed: string[] = [];
  page.on("response", (r) => r.status() >= 400 && !r.url().endsWith("/api/me") && failed.push(`${r.status()} ${r.url()}`));
  page.on("console", (m) => m.type() === "error" && /status of 400/.test(m.text()) && failed.push(m.text()));
  await page.goto("/app/register");
  await expect(page.getByRole("button", { name: en["auth.register.submit"] })).toBeVisible();
  await page.waitForLoadState("networkidle");
  expect(failed).toEqual([]);
});

test("the favicon is fetched once", async ({ page, user }) => {
  void user;
  const fetched: string[] = [];
  page.on("request", (r) => /favicon/.test(new URL(r.url()).pathname) && fetched.push(r.url()));
  await page.goto("/app/");
  await expect(page.getByTestId("empty-workspace")).toBeVisible();
  await expect(page.locator(".brand :is(svg, img)")).toBeVisible(); // the logo is still there
  await page.waitForLoadState("networkidle");
  expect(fetched.length, fetched.join(", ")).toBeLessThanOrEqual(1);
});

test("an 'Apply' button's name contains its visible text", async ({ page, en, user }) => {
  void user;
  await createPage(page.request, {
    title: "Compost",
    content: "# Compost\n\nCompost turns kitchen scraps into soil. Worms help the compost heap.",
  });
  await createPage(page.request, {
    title: "Vegetable Beds",
    content: "# Vegetable Beds\n\nOur vegetable beds need compost and soil every spring. We read about Compost often.\n",
  });
  await page.goto("/app/vegetable-beds");
  await page.getByTestId("toggle-suggestions").click();
  const links = page.getByRole("region", { name: en["intel.suggested_links"] });
  const apply = links.getByRole("listitem").filter({ hasText: "Compost" }).getByRole("button");
  await expect(apply).toHaveText(new RegExp(`^${en["intel.apply"]}`));
  // The visible word starts the name (WCAG 2.5.3); the rest says what it does.
  await expect(apply).toHaveAccessibleName(`${en["intel.apply"]}: ${fmt(en["intel.add_link"]!, { title: "Compost" })}`);
});

test("lists longer than one request's 500 items are read to the end", async ({ page, en, user }) => {
  void user;
  // 501 tokens: the list is asked for in two requests and shows every one.
  for (let i = 0; i < 501; i += 25) {
    await Promise.all(
      Array.from({ length: Math.min(25, 501 - i) }, (_, k) =>
        page.request.post("/api/tokens", { data: { name: `bulk ${String(i + k).padStart(3, "0")}` } }),
      ),
    );
  }
  const asked: string[] = [];
  page.on("request", (r) => r.url().includes("/api/tokens?") && asked.push(r.url()));
  await page.goto("/app/-/settings");
  const rows = page.getByTestId("token-list").locator("tbody tr");
  await expect(rows).toHaveCount(501);
  await expect(page.getByTestId("token-list")).toContainText("bulk 500");
  expect(asked.map((u) => new URL(u).searchParams.get("offset") ?? "0")).toEqual(["0", "500"]);
});
