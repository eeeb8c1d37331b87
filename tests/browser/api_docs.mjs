// The API browsers in a real Chromium with every request outside the server's origin
// blocked: both pages list the operations, nothing leaves the origin, and Swagger UI's
// "Authorize" (with a PAT) and "Try it out" create a page.
// Usage: node api_docs.mjs BASE_URL PAT  — prints one JSON line of findings.
import { chromium } from "playwright-core";

const [base, pat] = process.argv.slice(2);
const origin = new URL(base).origin;
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM_BIN || "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
});
const context = await browser.newContext();
const outside = [];
await context.route("**/*", (route) => {
  const url = route.request().url();
  if (url.startsWith(origin + "/") || url.startsWith("data:") || url.startsWith("blob:")) return route.continue();
  outside.push(url);
  return route.abort();
});
const page = await context.newPage();
const errors = [];
page.on("pageerror", (e) => errors.push(String(e)));
// A refused resource (CSP) is a console error: the pages must have none.
page.on("console", (m) => {
  if (m.type() === "error" && !m.text().includes("favicon")) errors.push(m.text());
});
const findings = {};

try {
  // Swagger UI lists the operations.
  await page.goto(`${base}/docs`);
  await page.waitForSelector(".opblock", { timeout: 30000 });
  findings.swagger_operations = await page.locator(".opblock").count();

  // Authorize with the PAT (the bearer scheme), then try POST /api/pages.
  await page.click("button.authorize");
  const modal = page.locator(".modal-ux");
  await modal.waitFor();
  const bearer = modal.locator(".auth-container").filter({ hasText: "bearer" }).first();
  await bearer.locator("input").first().fill(pat);
  await bearer.locator("button.authorize").click();
  await modal.locator("button.btn-done").first().click();

  const op = page.locator("#operations-pages-create_page");
  await op.locator(".opblock-summary").click();
  await op.locator("button.try-out__btn").click();
  const body = JSON.stringify({ slug: "made-in-swagger", content: "# Made in Swagger UI\n" });
  await op.locator("textarea.body-param__text").fill(body);
  await op.locator("button.execute").click();
  const status = op.locator(".live-responses-table .response .response-col_status").first();
  await status.waitFor({ timeout: 30000 });
  findings.try_it_out_status = (await status.innerText()).trim();

  // ReDoc lists the operations.
  await page.goto(`${base}/redoc`);
  await page.locator("a[href='#/pages/create_page']").first().waitFor({ timeout: 30000 });
  findings.redoc_lists_create_page = true;
  // Operation links are `#/<tag>/<operationId>`.
  findings.redoc_operations = await page.$$eval("a[href^='#/']", (links) =>
    new Set(links.map((a) => a.getAttribute("href")).filter((h) => /^#\/[^/]+\/[^/]+$/.test(h))).size,
  );
} catch (e) {
  findings.error = String(e);
}
findings.outside = outside;
findings.page_errors = errors;
console.log(JSON.stringify(findings));
await browser.close();
