#!/usr/bin/env node
// How fast the web app is for a user, measured in Chromium against a running Cairn server
// (it serves its own embedded app under /app/, gzipped, with its real CSP):
//
//   node bench/browser/speed.mjs http://127.0.0.1:8090 [--pages 1000] [--out result.json]
//
// It registers a fresh user, makes a personal access token, seeds --pages pages through
// POST /api/pages (8 requests at a time, bearer token): a "Library" page with 1,000
// children (or all of them, when fewer), the rest in sections of 300, each page a few
// paragraphs with wikilinks to its neighbours and a unique search word. Then it measures:
//
// - first_load: bytes transferred (compressed, from the network) on a cold first load of
//   a page view, JS and in total;
// - first_view_ms: navigation start → the page's title and content in the DOM, 20 cold
//   loads (a fresh browser context each: empty cache), median and p95;
// - page_to_page_ms: click on a wikilink in the content → the linked page's title and
//   content shown, 50 times; "hover" moves the pointer onto the link 150 ms before the
//   click (as a hand does; the app prefetches on hover), "direct" clicks at once;
// - search_ms: typing a word into the header's search box, last keystroke → the results
//   list shows the page with that word (includes the box's 180 ms debounce), 20 queries;
// - tree_expand_ms: click "expand" on the page with 1,000 children → its rows rendered
//   and a frame painted, 5 times.
//
// Prints one JSON object. Chromium: CHROMIUM_BIN or /usr/bin/chromium; playwright-core is
// taken from tests/browser/node_modules (run `npm ci` there first).
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { writeFileSync } from "node:fs";

const here = fileURLToPath(new URL(".", import.meta.url));
const require = createRequire(here + "../../tests/browser/package.json");
const { chromium } = require("playwright-core");

const args = process.argv.slice(2);
const base = (args.find((a) => !a.startsWith("--")) || "http://127.0.0.1:8090").replace(/\/$/, "");
const opt = (name, dflt) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : dflt;
};
const N = Number(opt("pages", "1000"));
const OUT = opt("out", "");
const CONCURRENCY = 8;

const stats = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const q = (p) => s[Math.min(s.length - 1, Math.ceil(p * s.length) - 1)];
  const r = (x) => Math.round(x * 10) / 10;
  return { n: s.length, p50: r(q(0.5)), p95: r(q(0.95)), min: r(s[0]), max: r(s[s.length - 1]) };
};

async function api(method, path, { body, token, cookie } = {}) {
  const headers = { Accept: "application/json" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (token) headers.Authorization = `Bearer ${token}`;
  if (cookie) headers.Cookie = cookie;
  const res = await fetch(base + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 300)}`);
  return { res, data: text ? JSON.parse(text) : null };
}

const WORDS = "runbook deploy rollback incident pager alert latency queue worker cache index backup restore certificate rotation database replica failover dashboard metric budget capacity review handover escalation".split(" ");
function content(i, title, links) {
  const w = (k) => WORDS[(i * 7 + k * 3) % WORDS.length];
  return `# ${title}

This page describes the ${w(0)} and ${w(1)} procedure for service ${i}. Unique word: kw${i}x.

## Steps

1. Check the ${w(2)} dashboard and the ${w(3)} alerts.
2. Follow ${links.map((l) => `[[${l}]]`).join(", ")} when the ${w(4)} is degraded.
3. Record the outcome in the ${w(5)} log.

## Notes

The ${w(6)} of this service depends on the ${w(7)} and the ${w(8)}. Keep the ${w(9)} under review
and hand over to the next on-call engineer with a short summary. #ops #service-${i % 20}
`;
}

async function pool(items, fn) {
  let next = 0;
  const workers = Array.from({ length: CONCURRENCY }, async () => {
    while (next < items.length) {
      const item = items[next++];
      await fn(item);
    }
  });
  await Promise.all(workers);
}

async function seed() {
  const email = `bench-${Date.now().toString(36)}@example.test`;
  const password = "correct horse battery";
  const reg = await api("POST", "/api/auth/register", { body: { email, password, name: "Bench User" } });
  const cookie = reg.res.headers.getSetCookie().map((c) => c.split(";")[0]).join("; ");
  const token = (await api("POST", "/api/tokens", { body: { name: "bench" }, cookie })).data.token;
  const titleOf = (i) => `Service ${i}`;
  const slugOf = (i) => `service-${i}`;
  const libraryKids = Math.min(1000, N - 1);
  const rest = N - 1 - libraryKids;
  const sections = Math.ceil(rest / 300);
  const started = performance.now();
  await api("POST", "/api/pages", { token, body: { title: "Library", slug: "library", content: "# Library\n\nEvery service has a page below." } });
  for (let s = 0; s < sections; s++)
    await api("POST", "/api/pages", { token, body: { title: `Section ${s}`, slug: `section-${s}`, content: `# Section ${s}\n\nServices of area ${s}.` } });
  const count = libraryKids + rest;
  const items = Array.from({ length: count }, (_, i) => i);
  const links = (i) => [titleOf((i + 1) % count), titleOf((i + 7) % count)];
  await pool(items, (i) =>
    api("POST", "/api/pages", {
      token,
      body: {
        title: titleOf(i),
        slug: slugOf(i),
        parent: i < libraryKids ? "library" : `section-${Math.floor((i - libraryKids) / 300)}`,
        content: content(i, titleOf(i), links(i)),
      },
    }),
  );
  // Page URLs carry their workspace (docs/web.md); older workspace-less ones are rewritten by the app.
  const ws = reg.data.default_workspace;
  const hrefOf = (slug) => `/app/@${encodeURIComponent(ws)}/${slug}`;
  return { email, password, count, seedSeconds: Math.round((performance.now() - started) / 100) / 10, titleOf, slugOf, hrefOf };
}

// Resolves (in the page) with performance.now() once the title is `title` and the content
// has rendered.
const waitShown = (title) =>
  new Promise((resolve) => {
    const check = () => {
      const h = document.querySelector(".page-title");
      const c = document.querySelector(".page-content");
      if (h && h.textContent === title && c && c.childElementCount > 0) {
        obs.disconnect();
        resolve(performance.now());
        return true;
      }
      return false;
    };
    const obs = new MutationObserver(check);
    obs.observe(document, { subtree: true, childList: true, characterData: true });
    check();
  });

async function main() {
  const s = await seed();
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_BIN || "/usr/bin/chromium",
    args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
  });
  // The wait is installed by an init script (the app's CSP forbids eval in the page).
  const newContext = async (o) => {
    const c = await browser.newContext(o);
    await c.addInitScript(`window.__waitShown = ${waitShown.toString()};`);
    return c;
  };
  const login = await browser.newContext({ baseURL: base });
  const ok = await login.request.post("/api/auth/login", { data: { email: s.email, password: s.password } });
  if (!ok.ok()) throw new Error(`login: ${ok.status()}`);
  const storageState = await login.storageState();
  await login.close();
  const viewport = { width: 1280, height: 800 };

  // Cold loads: a fresh context (empty cache) for each.
  const firstView = [];
  let firstLoad = null;
  for (let k = 0; k < 20; k++) {
    const i = (k * 37) % s.count;
    const ctx = await newContext({ baseURL: base, storageState, viewport });
    const page = await ctx.newPage();
    const sizes = [];
    page.on("requestfinished", async (req) => {
      const z = await req.sizes().catch(() => null);
      if (z) sizes.push({ type: req.resourceType(), url: req.url(), body: z.responseBodySize, headers: z.responseHeadersSize });
    });
    await page.addInitScript(`window.__shown = window.__waitShown(${JSON.stringify(s.titleOf(i))});`);
    await page.goto(s.hrefOf(s.slugOf(i)));
    const t = await page.evaluate(() => window.__shown);
    firstView.push(t);
    if (k === 0) {
      await page.waitForLoadState("networkidle");
      const sum = (f) => sizes.filter(f).reduce((a, z) => a + z.body + z.headers, 0);
      firstLoad = {
        js_bytes: sum((z) => z.type === "script"),
        css_bytes: sum((z) => z.type === "stylesheet"),
        api_bytes: sum((z) => z.url.includes("/api/")),
        total_bytes: sum(() => true),
        requests: sizes.length,
        js_files: sizes.filter((z) => z.type === "script").map((z) => `${new URL(z.url).pathname} ${z.body + z.headers}`),
      };
    }
    await ctx.close();
  }

  // Page to page, in one warm tab.
  const ctx = await newContext({ baseURL: base, storageState, viewport });
  const page = await ctx.newPage();
  await page.goto(s.hrefOf(s.slugOf(0)));
  await page.evaluate((t) => window.__waitShown(t), s.titleOf(0));
  const nav = { hover: [], direct: [] };
  let at = 0;
  for (let k = 0; k < 50; k++) {
    const mode = k % 2 === 0 ? "hover" : "direct";
    const next = (at + 1) % s.count;
    const link = page.locator(".page-content a.wikilink").first();
    if (mode === "hover") {
      await link.hover();
      await page.waitForTimeout(150);
    }
    const ms = await page.evaluate(
      async (title) => {
        const a = document.querySelector(".page-content a.wikilink");
        const t0 = performance.now();
        const done = window.__waitShown(title);
        a.click();
        return (await done) - t0;
      },
      s.titleOf(next),
    );
    nav[mode].push(ms);
    at = next;
    await page.mouse.move(5, 700);
  }

  // Search as you type.
  const search = [];
  const box = page.locator(".header .search-input");
  for (let k = 0; k < 20; k++) {
    const i = (k * 53 + 11) % s.count;
    await box.fill("");
    await page.waitForTimeout(250);
    const word = `kw${i}x`;
    await box.pressSequentially(word.slice(0, -1), { delay: 40 });
    const ms = await page.evaluate(
      ([title, last]) =>
        new Promise((resolve) => {
          const input = document.querySelector(".header .search-input");
          const t0 = performance.now();
          const check = () => {
            const first = document.querySelector("#search-results .search-result-title");
            if (first && first.textContent === title) {
              obs.disconnect();
              resolve(performance.now() - t0);
            }
          };
          const obs = new MutationObserver(check);
          obs.observe(document.querySelector(".search"), { subtree: true, childList: true, characterData: true });
          input.value += last;
          input.dispatchEvent(new InputEvent("input", { bubbles: true, data: last, inputType: "insertText" }));
        }),
      [s.titleOf(i), word.slice(-1)],
    );
    search.push(ms);
  }
  await box.fill("");
  await page.keyboard.press("Escape");

  // Tree: expand the page with 1,000 children.
  const tree = [];
  for (let k = 0; k < 5; k++) {
    await page.goto(s.hrefOf("section-0")).catch(() => undefined);
    await page.goto(s.hrefOf("library"));
    await page.waitForSelector(".page-title");
    // The tree loads after the page is shown.
    await page.waitForFunction(() =>
      [...document.querySelectorAll('.tree > li[role="treeitem"] .tree-link')].some((a) => a.textContent === "Library"),
    );
    const ms = await page.evaluate(async () => {
      const row = [...document.querySelectorAll('.tree > li[role="treeitem"]')].find((li) => li.querySelector(".tree-link")?.textContent === "Library");
      const btn = row.querySelector(".tree-toggle");
      if (row.getAttribute("aria-expanded") === "true") {
        btn.click();
        await new Promise((r) => setTimeout(r, 50));
      }
      const t0 = performance.now();
      btn.click();
      await new Promise((resolve) => {
        const check = () => row.querySelector('ul[role="group"] .tree-link') && resolve();
        const obs = new MutationObserver(check);
        obs.observe(row, { subtree: true, childList: true });
        check();
      });
      await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
      return performance.now() - t0;
    });
    tree.push(ms);
  }
  const rendered = await page.locator(".tree > li").filter({ hasText: "Library" }).locator('ul[role="group"] .tree-link').count();
  await browser.close();

  const result = {
    server: base,
    pages: s.count + 1 + Math.ceil(Math.max(0, N - 1 - Math.min(1000, N - 1)) / 300),
    seed_seconds: s.seedSeconds,
    first_load: firstLoad,
    first_view_ms: stats(firstView),
    page_to_page_ms: { hover: stats(nav.hover), direct: stats(nav.direct) },
    search_ms: stats(search),
    tree_expand_ms: { ...stats(tree), children: Math.min(1000, N - 1), rows_rendered: rendered },
  };
  const json = JSON.stringify(result, null, 2);
  console.log(json);
  if (OUT) writeFileSync(OUT, json + "\n");
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
