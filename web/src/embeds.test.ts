// Embedded pages (src/embeds.ts): looked up without a request, fetched when wanted, every
// slug wanted within one task in one GET /api/embeds (at most 50 slugs each), kept per
// workspace, dropped when pages change, fetched again once old. The API is a stub here.
import { afterEach, beforeEach, expect, test, vi } from "vitest";

const calls: { ws: string; slugs: string[] }[] = [];
let answer: (slugs: string[]) => Promise<unknown> = async (slugs) => ({
  items: slugs.filter((s) => !s.startsWith("gone")).map((s) => ({ slug: s, title: s.toUpperCase(), content: `text of ${s}` })),
  missing: slugs.filter((s) => s.startsWith("gone")),
});

vi.mock("./api", async (importOriginal) => {
  const real = await importOriginal<typeof import("./api")>();
  return {
    ...real,
    api: {
      ...real.api,
      embeds: (ws: string, slugs: string[]) => {
        calls.push({ ws, slugs });
        return answer(slugs);
      },
      page: () => {
        throw new Error("no request per page");
      },
    },
  };
});

const { BATCH, embedsVersion, lookupEmbed, wantEmbed, watchEmbeds } = await import("./embeds");
const { ApiError } = await import("./api");
const { currentWorkspace, pagesVersion } = await import("./session");

/** Lets the queued flush run and its answers arrive. */
const settle = () => new Promise((r) => setTimeout(r, 5));

let clock = 1_000_000;
beforeEach(() => {
  calls.length = 0;
  vi.spyOn(performance, "now").mockImplementation(() => clock);
  currentWorkspace.set("team");
  pagesVersion.set(pagesVersion.get() + 1); // a clean cache
});
afterEach(() => vi.restoreAllMocks());

test("a lookup asks for nothing: the embed is loading until it is wanted", async () => {
  expect(lookupEmbed("alpha")).toEqual({ state: "loading" });
  await settle();
  expect(calls).toEqual([]);
});

test("every slug wanted in one task goes into one request, 50 at most each", async () => {
  const version = embedsVersion.get();
  for (let i = 0; i < 120; i++) wantEmbed(`page-${i}`);
  wantEmbed("page-3"); // asked twice, sent once
  wantEmbed("gone-1");
  expect(calls).toEqual([]); // not before the task is over
  await settle();
  expect(calls.map((c) => c.slugs.length)).toEqual([BATCH, BATCH, 21]);
  expect(calls.every((c) => c.ws === "team")).toBe(true);
  expect(new Set(calls.flatMap((c) => c.slugs)).size).toBe(121);
  expect(lookupEmbed("page-7")).toEqual({ state: "page", title: "PAGE-7", content: "text of page-7" });
  expect(lookupEmbed("gone-1")).toEqual({ state: "missing" });
  expect(embedsVersion.get()).toBeGreaterThan(version);
});

test("a known page is not asked for again until it is old, then once", async () => {
  wantEmbed("alpha");
  await settle();
  wantEmbed("alpha");
  await settle();
  expect(calls).toHaveLength(1);
  clock += 31_000;
  answer = async (slugs) => ({ items: slugs.map((s) => ({ slug: s, title: "A", content: "new text" })), missing: [] });
  wantEmbed("alpha");
  wantEmbed("alpha");
  expect(lookupEmbed("alpha")).toMatchObject({ content: "text of alpha" }); // the old text until then
  await settle();
  expect(calls).toHaveLength(2);
  expect(lookupEmbed("alpha")).toMatchObject({ content: "new text" });
});

test("kept per workspace, and dropped when pages change", async () => {
  wantEmbed("alpha");
  await settle();
  currentWorkspace.set("other");
  expect(lookupEmbed("alpha")).toEqual({ state: "loading" });
  wantEmbed("alpha");
  await settle();
  expect(calls.map((c) => c.ws)).toEqual(["team", "other"]);
  pagesVersion.set(pagesVersion.get() + 1);
  expect(lookupEmbed("alpha")).toEqual({ state: "loading" });
});

test("a failed request fails its slugs; a 404 (no such workspace) makes them missing", async () => {
  answer = async () => {
    throw new ApiError(500, {}, null);
  };
  wantEmbed("alpha");
  await settle();
  expect(lookupEmbed("alpha")).toEqual({ state: "failed" });
  answer = async () => {
    throw new ApiError(404, { code: "workspace_not_found" }, null);
  };
  wantEmbed("beta");
  await settle();
  expect(lookupEmbed("beta")).toEqual({ state: "missing" });
});

test("watchEmbeds wants the embeds near the viewport, also those of later renders", async () => {
  answer = async (slugs) => ({ items: slugs.map((s) => ({ slug: s, title: s, content: s })), missing: [] });
  // An observer that sees every element but those marked far away.
  class Seen {
    constructor(private readonly cb: (e: { isIntersecting: boolean; target: Element }[]) => void) {}
    observe(el: HTMLElement) {
      queueMicrotask(() => this.cb([{ isIntersecting: el.dataset.far === undefined, target: el }]));
    }
    unobserve() {}
    disconnect() {}
  }
  vi.stubGlobal("IntersectionObserver", Seen);
  const host = document.createElement("div");
  document.body.append(host);
  host.innerHTML = `<div data-embed-load="one"></div><div data-embed-load="two"></div><div data-embed-load="far" data-far></div>`;
  const stop = watchEmbeds(host);
  await settle();
  expect(calls.map((c) => c.slugs.sort())).toEqual([["one", "two"]]); // one request for both
  host.innerHTML = `<div data-embed-load="three"></div>`; // a later render
  await settle();
  await settle();
  stop();
  vi.unstubAllGlobals();
  expect(calls.flatMap((c) => c.slugs).sort()).toEqual(["one", "three", "two"]);
  host.remove();
});
