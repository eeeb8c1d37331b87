// Messages with a count take the plural form of the catalogue's language (src/i18n.ts).
import { afterEach, expect, test } from "vitest";
import { catalogue, t, tParts } from "./i18n";

const messages = {
  "count.pages_one": "{count} page",
  "count.pages_other": "{count} pages",
  "tree.show_more": "Show {count} more",
  "x.install": "Run {command}, then {setting}.",
};

afterEach(() => catalogue.set({ language: "en", languages: ["en"], messages: {} }));

test("English: one for 1, other for 0 and 2", () => {
  catalogue.set({ language: "en", languages: ["en"], messages });
  expect(t("count.pages", { count: 1 })).toBe("1 page");
  expect(t("count.pages", { count: 0 })).toBe("0 pages");
  expect(t("count.pages", { count: 2 })).toBe("2 pages");
});

test("French: one for 0 and 1", () => {
  catalogue.set({ language: "fr", languages: ["fr"], messages: { "count.pages_one": "{count} page", "count.pages_other": "{count} pages" } });
  expect(t("count.pages", { count: 0 })).toBe("0 page");
  expect(t("count.pages", { count: 1 })).toBe("1 page");
  expect(t("count.pages", { count: 2 })).toBe("2 pages");
  // A category the catalogue lacks ("many": a million in French) takes `other`.
  expect(t("count.pages", { count: 1_000_000 })).toBe("1000000 pages");
});

test("Japanese: one form, `other`", () => {
  catalogue.set({ language: "ja", languages: ["ja"], messages: { "count.pages_one": "unused", "count.pages_other": "{count} ページ" } });
  expect(t("count.pages", { count: 1 })).toBe("1 ページ");
});

test("a message the same for every number keeps its plain key", () => {
  catalogue.set({ language: "en", languages: ["en"], messages });
  expect(t("tree.show_more", { count: 1 })).toBe("Show 1 more");
});

test("parts in a message, in its order", () => {
  catalogue.set({ language: "en", languages: ["en"], messages });
  expect(tParts("x.install", { command: 1, setting: 2 })).toEqual(["Run ", 1, ", then ", 2, "."]);
});
