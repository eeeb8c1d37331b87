// Front matter: a YAML block at the very start (first line "---", closed by "---" or
// "..."), as the server reads it (src/markdown/mod.rs: split_front_matter, then
// yaml-rust2). It is not shown. The YAML is read by the `yaml` package; this module finds
// the block, picks keys and their text out of the parsed document as the server does,
// and writes the one key the app writes (`summary:`) in place.
import type { Document, Node, Pair } from "yaml";
import type * as Yaml from "./yaml";
import { store } from "../store";

// The parser (~30 KB gzip, a third of the app) is loaded when front matter is first read,
// as highlight.js is when code is: until then nothing is read from it (and nothing
// written), and `yamlLoaded` turning true tells the screens to read again. The editor
// waits for it: the title a save sends depends on it.
let lib: typeof Yaml | null = null;
let loading: Promise<void> | null = null;
export const yamlLoaded = store(false);

export function loadYaml(): Promise<void> {
  loading ??= import("./yaml").then(
    (m) => {
      lib = m;
      yamlLoaded.set(true);
    },
    (e: unknown) => {
      loading = null; // tried again at the next read
      throw e;
    },
  );
  return loading;
}

/** The parser, or null while it loads (asked for then). */
function parser(): typeof Yaml | null {
  if (!lib) void loadYaml().catch(() => undefined);
  return lib;
}

function isFence(line: string, closing: boolean): boolean {
  const l = line.replace(/[ \t\r]+$/, "");
  return l === "---" || (closing && l === "...");
}

/** [yaml or null, body]. */
export function splitFrontMatter(markdown: string): [string | null, string] {
  const text = markdown.startsWith("\uFEFF") ? markdown.slice(1) : markdown;
  const firstEnd = text.indexOf("\n");
  if (firstEnd < 0 || !isFence(text.slice(0, firstEnd), false)) return [null, markdown];
  let lineStart = firstEnd + 1;
  while (lineStart < text.length) {
    let lineEnd = text.indexOf("\n", lineStart);
    if (lineEnd < 0) lineEnd = text.length;
    if (isFence(text.slice(lineStart, lineEnd), true)) {
      return [text.slice(firstEnd + 1, lineStart), text.slice(Math.min(lineEnd + 1, text.length))];
    }
    lineStart = lineEnd + 1;
  }
  return [null, markdown];
}

/** The parsed YAML, or null when it does not parse: the server then reads nothing from
 *  it, and nothing here may throw on what a person typed (the preview renders on every
 *  keystroke). A repeated key is an error, as it is for the server, unless `repeats`. */
function parse(Y: typeof Yaml, text: string, repeats = false): Document | null {
  try {
    const doc = Y.parseDocument(text, { uniqueKeys: !repeats });
    return doc.errors.length === 0 ? doc : null;
  } catch {
    return null;
  }
}

function isKey(Y: typeof Yaml, pair: Pair<unknown, unknown>, key: string): boolean {
  return Y.isScalar(pair.key) && pair.key.value === key;
}

/** A top-level key's value, when the YAML is a mapping (block or flow) that has it. */
function valueOf(Y: typeof Yaml, doc: Document | null, key: string): unknown {
  if (!doc || !Y.isMap(doc.contents)) return undefined;
  const value = doc.contents.items.find((p) => isKey(Y, p, key))?.value;
  return Y.isAlias(value) ? value.resolve(doc) : value;
}

/** 2^63: the server reads an integer as an i64 (-2^63 to 2^63-1); beyond, a number is
 *  text as written. */
const I64 = 2n ** 63n;
const INTEGER = /^([-+]?[0-9]+|0x[0-9a-fA-F]+|0o[0-7]+)$/;
/** How yaml-rust2 spells null and the booleans (YAML 1.2's core schema also takes `Null`
 *  and `NULL`, which the server reads as text). */
const NO_TEXT = /^(|~|null|true|True|TRUE|false|False|FALSE)$/;

/** A value as text as the server reads it (yaml-rust2): a string, or a number as written
 *  (an integer in decimal: `0x1F` is "31"); null for a list, a mapping, a null or a
 *  boolean. */
function scalarText(Y: typeof Yaml, value: unknown): string | null {
  if (!Y.isScalar(value)) return null;
  const v: unknown = value.value;
  if (typeof v === "string") return v;
  const written = value.source ?? String(v);
  if (typeof v === "number" && INTEGER.test(written)) {
    const n = BigInt(written);
    return n >= -I64 && n < I64 ? n.toString() : written;
  }
  return NO_TEXT.test(written) && (v === null || typeof v === "boolean") ? null : written;
}

/** A top-level key's text (see scalarText), trimmed; null when there is no front matter,
 *  no such key, or its value is no text or empty (or the parser is still loading). */
export function frontMatterText(markdown: string, key: string): string | null {
  const [text] = splitFrontMatter(markdown);
  const Y = text === null ? null : parser();
  if (text === null || !Y) return null;
  const value = scalarText(Y, valueOf(Y, parse(Y, text), key))?.trim();
  return value ? value : null;
}

/** The front matter's top-level `summary` as text, read as a title is; null when there
 *  is none, or it is empty or no text. */
export function frontMatterSummary(markdown: string): string | null {
  return frontMatterText(markdown, "summary");
}

/** Where each top-level `key:` entry of the YAML lies among its lines (split at "\n"):
 *  [first, end) from the key's line to the last line of its value (blank lines and
 *  comments after it are not its). Null when the YAML cannot take a key: it is not a
 *  block mapping (a list, a flow mapping, a lone scalar) or does not parse. A repeated
 *  key is found each time (an edit keeps one of them). */
function keyLines(Y: typeof Yaml, yaml: string, key: string): [number, number][] | null {
  const doc = parse(Y, yaml, true);
  if (doc === null) return null;
  if (doc.contents === null) return []; // comments only
  if (!Y.isMap(doc.contents) || doc.contents.flow) return null;
  const lineOf = (offset: number) => yaml.slice(0, offset).split("\n").length - 1;
  return doc.contents.items
    .filter((p) => isKey(Y, p, key))
    .map((p) => {
      const start = (p.key as Node).range![0];
      const end = (p.value as Node | null)?.range?.[1] ?? (p.key as Node).range![1];
      return [lineOf(start), lineOf(Math.max(start, end - 1)) + 1];
    });
}

/** A YAML double-quoted scalar: the JSON string (JSON's escapes are YAML's too), with
 *  what YAML does not take as printable (DEL, C1 controls, U+2028/9, U+FEFF) escaped as
 *  well, and a lone surrogate as U+FFFD. */
function yamlString(text: string): string {
  const wellFormed = text.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, "\ufffd");
  return JSON.stringify(wellFormed).replace(
    /[\u007f-\u009f\u2028\u2029\ufeff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

/** The content with `summary: "…"` in its front matter: in place of a `summary:` key it
 *  has (every such key: one is left), else as the front matter's last line, else in a
 *  front matter made for it at the start. Every other byte stays as it was; a page with
 *  CRLF line endings gets CRLF. Front matter that is not a block mapping (a list, a flow
 *  mapping) or does not parse cannot take a key (nor any while the parser loads): the
 *  content is answered unchanged. */
export function withSummary(content: string, summary: string): string {
  const entry = `summary: ${yamlString(summary)}`;
  const [yaml] = splitFrontMatter(content);
  const firstEnd = content.indexOf("\n");
  const cr = firstEnd > 0 && content[firstEnd - 1] === "\r" ? "\r" : "";
  if (yaml === null) {
    const bom = content.startsWith("\ufeff") ? "\ufeff" : "";
    const eol = cr + "\n";
    return `${bom}---${eol}${entry}${eol}---${eol}${content.slice(bom.length)}`;
  }
  const Y = parser();
  const entries = Y && keyLines(Y, yaml, "summary");
  if (!entries) return content;
  // The YAML runs from the line after the opening fence to the closing fence's line,
  // and ends with its last line's "\n" (or is empty).
  const start = firstEnd + 1;
  const lines = yaml === "" ? [] : yaml.slice(0, -1).split("\n");
  if (entries.length === 0) {
    lines.push(entry + cr);
  } else {
    for (const [from, to] of entries.slice(1).reverse()) lines.splice(from, to - from);
    const [from, to] = entries[0]!;
    lines.splice(from, to - from, entry + (lines[from]!.endsWith("\r") ? "\r" : ""));
  }
  return content.slice(0, start) + lines.map((l) => l + "\n").join("") + content.slice(start + yaml.length);
}
