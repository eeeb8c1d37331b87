// Page links carry their workspace (/app/@<workspace>/<slug>): a link shared between two
// members whose current workspaces differ opens the right page, a non-member gets the
// not-found page, and old workspace-less links (/app/<slug>) still open the page of the
// current workspace. And signing in asks for no page named after the auth screens.
import type { APIRequestContext } from "@playwright/test";
import { createPage, expect, pageUrl, registerUser, signIn, test, uniqueEmail, type TestUser } from "../fixtures";

async function switchUser(request: APIRequestContext, who: TestUser): Promise<void> {
  await request.post("/api/auth/logout");
  const res = await request.post("/api/auth/login", { data: { email: who.email, password: who.password } });
  expect(res.status(), await res.text()).toBe(200);
}

async function workspaceName(request: APIRequestContext, slug: string): Promise<string> {
  const list = (await (await request.get("/api/workspaces")).json()).items as { slug: string; name: string }[];
  return list.find((w) => w.slug === slug)!.name;
}

test("a shared page link opens its workspace's page for a member, not-found for others; old links still work", async ({
  page,
  en,
}) => {
  const api = page.request;
  // Bea has a "Roadmap" of her own, in her personal workspace.
  const bea = await registerUser(api, "Bea");
  await createPage(api, { title: "Roadmap", content: "# Roadmap\n\nBea's own roadmap." });
  const beaSpace = await workspaceName(api, bea.workspace);

  // Ana's team workspace, with Bea in it, has another "Roadmap" (the same slug).
  const ana = await registerUser(api, "Ana");
  const team = `Team ${Math.random().toString(36).slice(2, 8)}`;
  const ws = await (await api.post("/api/workspaces", { data: { name: team } })).json();
  expect((await api.post(`/api/workspaces/${ws.slug}/members`, { data: { email: bea.email } })).status()).toBe(201);
  for (const body of [
    { title: "Roadmap", content: "# Roadmap\n\nThe team's roadmap." },
    { title: "Milestones", parent: "roadmap", content: "# Milestones\n\nQ3 and Q4." },
  ]) {
    const res = await api.post(`/api/pages?ws=${ws.slug}`, { data: body });
    expect(res.status(), await res.text()).toBe(201);
  }

  // Ana opens the team's page in the app: the address bar names its workspace.
  await page.goto("/app/");
  await page.getByTestId("workspace-switcher").click();
  await page.getByRole("menuitemradio", { name: team }).click();
  await page.getByRole("tree").getByRole("link", { name: "Roadmap" }).click();
  const content = page.locator(".page-content");
  await expect(content).toContainText("The team's roadmap.");
  await expect(page).toHaveURL(pageUrl("roadmap", "", ws.slug));
  const shared = page.url();
  void ana;

  // Bea, whose current workspace is her own: an old workspace-less link opens her page
  // there, and the address bar then shows the full link.
  await switchUser(api, bea);
  await page.goto("/app/roadmap");
  await expect(content).toContainText("Bea's own roadmap.");
  await expect(page).toHaveURL(pageUrl("roadmap", "", bea.workspace));
  await expect(page.getByTestId("workspace-switcher")).toContainText(beaSpace);

  // Ana's link opens the team's page, and the app is now in the team's workspace. The
  // page is asked for once, in that workspace (fetched as the app loads, not again after).
  const views: string[] = [];
  page.on("request", (r) => {
    const url = new URL(r.url());
    if (url.pathname === "/api/pages/roadmap/view") views.push(url.searchParams.get("ws") ?? "");
  });
  await page.goto(shared);
  await expect(content).toContainText("The team's roadmap.");
  await expect(page).toHaveURL(shared);
  await expect(page.getByTestId("workspace-switcher")).toContainText(team);
  await expect(page.getByRole("tree").getByRole("link", { name: "Roadmap" })).toHaveAttribute("aria-current", "page");
  // Links on it stay in that workspace.
  await page.locator(".page-children").getByRole("link", { name: "Milestones" }).click();
  await expect(page).toHaveURL(pageUrl("milestones", "", ws.slug));
  await expect(content).toContainText("Q3 and Q4.");
  expect(views).toEqual([ws.slug]);
  // Back to her own page's link: her own workspace again.
  await page.goBack();
  await page.goBack();
  await expect(page).toHaveURL(pageUrl("roadmap", "", bea.workspace));
  await expect(content).toContainText("Bea's own roadmap.");
  await expect(page.getByTestId("workspace-switcher")).toContainText(beaSpace);

  // Cleo is not a member: the not-found page, nothing of the team's, her workspace kept.
  const cleo = await registerUser(api, "Cleo");
  const cleoSpace = await workspaceName(api, cleo.workspace);
  await page.goto(shared);
  await expect(page.getByRole("heading", { name: en["common.not_found"] })).toBeVisible();
  await expect(page.getByText("The team's roadmap.")).toHaveCount(0);
  await expect(page.getByTestId("page-missing")).toHaveCount(0); // no "create it?" either
  await expect(page.getByTestId("workspace-switcher")).toContainText(cleoSpace);
});

test("signing in or registering asks for no page named login or register", async ({ page, en }) => {
  const asked: string[] = [];
  page.on("request", (r) => {
    if (/\/api\/pages\/(login|register)(\/|\?|$)/.test(new URL(r.url()).pathname)) asked.push(r.url());
  });
  const email = uniqueEmail("auth-route");
  await page.goto("/app/register");
  await page.getByLabel(en["auth.field.name"]!).fill("Route Tester");
  await page.getByLabel(en["auth.field.email"]!).fill(email);
  await page.getByLabel(en["auth.field.password"]!).fill("correct horse battery");
  await page.getByRole("button", { name: en["auth.register.submit"] }).click();
  await expect(page.getByTestId("empty-workspace")).toBeVisible();

  await page.getByTestId("user-menu").click();
  await page.getByRole("menuitem", { name: en["nav.sign_out"] }).click();
  await expect(page).toHaveURL(/\/app\/login/);
  await signIn(page, en, email, "correct horse battery");
  await expect(page.getByTestId("empty-workspace")).toBeVisible();
  // Every request the app made after signing in has been sent by now.
  await page.waitForLoadState("networkidle");
  expect(asked).toEqual([]);
});
