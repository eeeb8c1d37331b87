// Front matter as the app reads and writes it: the summary it shows under a page's title,
// the title a save takes from it (tests/fixtures/markdown.json holds the cases shared
// with the server), and the `summary:` line "Use this summary" writes.
import { beforeAll, describe, expect, test } from "vitest";
import { frontMatterSummary, loadYaml, splitFrontMatter, withSummary } from "./frontmatter";
import { frontMatterTitle } from "./title";

const page = (yaml: string) => `---\n${yaml}\n---\n# Body\n`;

beforeAll(loadYaml);

describe("splitFrontMatter", () => {
  test("the block at the very start, closed by --- or ...", () => {
    expect(splitFrontMatter("---\na: 1\n---\nbody")).toEqual(["a: 1\n", "body"]);
    expect(splitFrontMatter("---\r\na: 1\r\n...\r\nbody")).toEqual(["a: 1\r\n", "body"]);
    expect(splitFrontMatter("\ufeff---\n---\nbody")).toEqual(["", "body"]);
  });
  test("none unless it opens the text and is closed", () => {
    expect(splitFrontMatter("body\n---\na: 1\n---\n")).toEqual([null, "body\n---\na: 1\n---\n"]);
    expect(splitFrontMatter("---\na: 1\n")).toEqual([null, "---\na: 1\n"]);
  });
});

describe("frontMatterSummary", () => {
  test.each([
    ["summary: A plain one.", "A plain one."],
    ['summary: "Quoted \\"x\\" \\u00e9 \\x41"', 'Quoted "x" é A'],
    ["summary: 'It''s'", "It's"],
    ["summary: |\n  Line one\n  Line two", "Line one\nLine two"],
    ["summary: >\n  Folded\n  text", "Folded text"],
    ["summary: one\n  two", "one two"],
    ["summary: kept # a comment", "kept"],
    ["title: T\nsummary: 42", "42"],
  ])("%j", (yaml, summary) => {
    expect(frontMatterSummary(page(yaml))).toBe(summary);
  });

  test.each([["summary:"], ["summary: ~"], ['summary: ""'], ["title: T"], ["meta:\n  summary: nested"], ["- summary: x"]])(
    "none in %j",
    (yaml) => {
      expect(frontMatterSummary(page(yaml))).toBeNull();
    },
  );

  test("none without front matter", () => {
    expect(frontMatterSummary("summary: x\n")).toBeNull();
  });

  test.each([["summary: [unclosed"], ['summary: "unclosed'], ["\t- : :"], ["{{{{"], ["summary: a\nsummary: b"]])(
    "none, and no throw, when the YAML does not parse: %j",
    (yaml) => {
      expect(frontMatterSummary(page(yaml))).toBeNull();
    },
  );
});

describe("frontMatterTitle", () => {
  test.each([
    ["title: Hello", "Hello"],
    ["title: 2024", "2024"],
    ['title: "  Spaced  "', "Spaced"],
    ['title: "Two\\nlines"', "Two lines"],
  ])("%j", (yaml, title) => {
    expect(frontMatterTitle(page(yaml))).toBe(title);
  });

  test.each([["title: [a, b]"], ["title: true"], ["title: ~"], ["title:"], ["title: {a: 1}"]])("none in %j", (yaml) => {
    expect(frontMatterTitle(page(yaml))).toBeNull();
  });
});

describe("withSummary", () => {
  const S = 'Say "hi"';
  const line = 'summary: "Say \\"hi\\""';

  test.each([
    ["no front matter", "# T\n", `---\n${line}\n---\n# T\n`],
    ["no front matter, CRLF", "# T\r\nx\r\n", `---\r\n${line}\r\n---\r\n# T\r\nx\r\n`],
    ["a byte order mark", "\ufeff# T\n", `\ufeff---\n${line}\n---\n# T\n`],
    ["front matter without one", "---\ntitle: T\n---\nbody\n", `---\ntitle: T\n${line}\n---\nbody\n`],
    ["front matter without one, CRLF", "---\r\ntitle: T\r\n---\r\nbody", `---\r\ntitle: T\r\n${line}\r\n---\r\nbody`],
    ["empty front matter", "---\n---\nbody", `---\n${line}\n---\nbody`],
    ["comments only", "---\n# c\n---\n", `---\n# c\n${line}\n---\n`],
    ["one in place", "---\nsummary: old\ntags: [a]\n---\nbody", `---\n${line}\ntags: [a]\n---\nbody`],
    ["a block one", "---\nsummary: |\n  old\n  text\n\ntitle: T\n---\n", `---\n${line}\n\ntitle: T\n---\n`],
    ["a list", "---\nsummary:\n  - a\n  - b\nx: 1\n---\n", `---\n${line}\nx: 1\n---\n`],
    ["a repeated one", "---\nsummary: a\ntitle: T\nsummary: b\n---\n", `---\n${line}\ntitle: T\n---\n`],
    ["one in a CRLF page", "---\r\nsummary: old\r\nx: 1\r\n---\r\n", `---\r\n${line}\r\nx: 1\r\n---\r\n`],
  ])("%s", (_, content, expected) => {
    expect(withSummary(content, S)).toBe(expected);
  });

  test.each([
    ["a list", "---\n- a\n---\n"],
    ["a flow mapping", "---\n{a: 1}\n---\n"],
    ["YAML that does not parse", "---\ntitle: [unclosed\n---\n"],
  ])(
    "no key can go into %s",
    (_, content) => {
      expect(withSummary(content, S)).toBe(content);
    },
  );

  test.each([['quotes "and" \\ backslashes'], ["é ü 日本語 🙂"], ["controls \u0007 \u2028 \u0085 \ufeff in the middle"]])(
    "reads back %j",
    (summary) => {
      expect(frontMatterSummary(withSummary("# T\n", summary))).toBe(summary);
      expect(frontMatterSummary(withSummary("---\ntitle: T\nsummary: x\n---\n", summary))).toBe(summary);
    },
  );
});
