// Images from other sites (src/markdown/render.ts): shown (lazily, without a Referer)
// when the server allows them, else — and while that is unknown, and always over plain
// http — a placeholder naming the link, with no `src` left to fetch.
import { afterEach, expect, test } from "vitest";
import { externalImages } from "../limits";
import { renderMarkdown } from "./render";

const messages: Record<string, string> = {
  "image.external_blocked": "External image not shown:",
  "image.external_blocked_named": "External image “{name}” not shown:",
  "image.external_hint": "This server does not load images from other sites.",
};
const env = {
  href: (slug: string) => `/p/${slug}`,
  missingTitle: (target: string) => target,
  text: (key: string, vars?: Record<string, string | number>) =>
    (messages[key] ?? key).replace(/\{(\w+)\}/g, (m, k: string) => String(vars?.[k] ?? m)),
};
const html = (md: string) => {
  const box = document.createElement("div");
  box.innerHTML = renderMarkdown(md, env).html;
  return box;
};

afterEach(() => externalImages.set(null));

test("allowed: the image is shown, lazily and without a Referer", () => {
  externalImages.set(true);
  const img = html("![A chart](https://images.example.org/chart.png)").querySelector("img")!;
  expect(img.getAttribute("src")).toBe("https://images.example.org/chart.png");
  expect(img.getAttribute("referrerpolicy")).toBe("no-referrer");
  expect(img.getAttribute("loading")).toBe("lazy");
});

test("blocked: a placeholder with the link, and no image", () => {
  externalImages.set(false);
  const box = html("Before ![A chart](https://images.example.org/chart.png) after");
  expect(box.querySelector("img")).toBeNull();
  const ph = box.querySelector(".image-external")!;
  expect(ph.textContent).toContain("External image “A chart” not shown:");
  const link = ph.querySelector("a")!;
  expect(link.getAttribute("href")).toBe("https://images.example.org/chart.png");
  expect(link.textContent).toBe("https://images.example.org/chart.png");
  expect(link.getAttribute("rel")).toBe("noopener noreferrer");
  expect(box.textContent).toContain("Before");
});

test("HTML images and srcset are held back too", () => {
  externalImages.set(false);
  const box = html('An <img src="https://x.example/a.png" srcset="https://x.example/b.png 2x">');
  expect(box.querySelector("img")).toBeNull();
  expect(box.querySelector(".image-external a")!.getAttribute("href")).toBe("https://x.example/a.png");
});

test("unknown yet: held back", () => {
  expect(html("![](https://x.example/a.png)").querySelector("img")).toBeNull();
});

test("plain http is never loaded (the CSP allows https only)", () => {
  externalImages.set(true);
  const box = html("![](http://x.example/a.png)");
  expect(box.querySelector("img")).toBeNull();
  expect(box.querySelector(".image-external")!.textContent).toContain("External image not shown:");
});

test("own images are untouched", () => {
  externalImages.set(false);
  const box = html('![](/uploads/ws/a.png) and <img src="/uploads/ws/b.png">');
  expect([...box.querySelectorAll("img")].map((i) => i.getAttribute("src"))).toEqual(["/uploads/ws/a.png", "/uploads/ws/b.png"]);
  expect(box.querySelector(".image-external")).toBeNull();
});

test("an address is text in the placeholder, never markup", () => {
  externalImages.set(false);
  const box = html('A <img alt="x> <b>y</b>" src="https://x.example/a.png?q=%3Cscript%3E">');
  expect(box.querySelector("b, script")).toBeNull();
  expect(box.querySelector(".image-external")!.textContent).toContain("“x> <b>y</b>”");
});

test("inside a link the address is text, not a second link", () => {
  externalImages.set(false);
  const box = html("[![badge](https://ci.example/badge.svg)](https://ci.example/)");
  expect(box.querySelectorAll("a")).toHaveLength(1);
  expect(box.querySelector(".image-external-link")!.tagName).toBe("SPAN");
});
