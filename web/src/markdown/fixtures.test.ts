// The markdown rules the app shares with the server, checked against the cases both test
// suites read (tests/fixtures/markdown.json; the server's side is
// tests/it/markdown_fixtures.rs). Every expected value there is the server's answer; a case
// the app does not read the same way yet says so (`ts_differs`) and is checked here to
// still differ (`test.fails`): the difference shows in every run, and the day the app
// reads it as the server does, the run says so and the mark comes off.
import { beforeAll, describe, expect, test } from "vitest";
import fixtures from "../../../tests/fixtures/markdown.json";
import { loadYaml } from "./frontmatter";
import { renderMarkdown } from "./render";
import { deriveSlug, resolveTarget } from "./slug";
import { frontMatterTitle, oneLine } from "./title";
import { wikilinkParts } from "./wikilinks";

const env = { href: (slug: string) => `/p/${slug}`, missingTitle: (target: string) => target };

/** `test`, or `test.fails` named with the reason when the app differs from the server. */
function check(name: string, differs: string | undefined, fn: () => void): void {
  if (differs) test.fails(`${name} (differs: ${differs})`, fn);
  else test(name, fn);
}

beforeAll(loadYaml);

describe("a title's slug", () => {
  for (const c of fixtures.slugs) {
    test(JSON.stringify(c.title), () => expect(deriveSlug(c.title)).toBe(c.slug));
  }
});

describe("heading anchors", () => {
  for (const c of fixtures.headings) {
    check(JSON.stringify(c.markdown), c.ts_differs, () => {
      expect(renderMarkdown(c.markdown, env).headings).toEqual(c.headings);
    });
  }
});

describe("front matter's title", () => {
  for (const c of fixtures.front_matter) {
    // The app reads the title as a save takes it: on one line.
    test(JSON.stringify(c.markdown), () => expect(frontMatterTitle(c.markdown)).toBe(c.title === null ? null : oneLine(c.title)));
  }
});

describe("wikilinks", () => {
  for (const c of fixtures.wikilinks) {
    check(JSON.stringify(c.markdown), c.ts_differs, () => {
      // The pages the rendered page links to, once each, in order.
      const page = new DOMParser().parseFromString(renderMarkdown(c.markdown, env).html, "text/html");
      const slugs = [...page.querySelectorAll("a.wikilink")].map((a) => a.getAttribute("data-slug") ?? "").filter((s) => s !== "");
      expect([...new Set(slugs)]).toEqual(c.links.map((l) => l.slug));
      // Each link read from its source.
      for (const link of c.links) {
        const { target, section, label } = wikilinkParts(link.source.replace(/^!?\[\[|\]\]$/g, ""));
        expect({ target, slug: resolveTarget(target), heading: section, label: label || null }).toEqual({
          target: link.target,
          slug: link.slug,
          heading: link.heading,
          label: link.label,
        });
      }
    });
  }
});
