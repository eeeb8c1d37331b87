// Front matter: a YAML block at the very start (first line "---", closed by "---" or
// "..."), as the server reads it (src/markdown/mod.rs split_front_matter). It is not shown.

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

/** Where a top-level key's entries lie among the front matter's lines (each without its
 *  "\n"; a "\r" may end it): [first, end) for every `key:` line at column 0, with the
 *  lines that continue its value (indented, or a `- item` of a list; blank lines between
 *  them, not after). */
export function keyEntries(lines: string[], key: string): [number, number][] {
  const head = new RegExp(`^${key}[ \\t]*:(?:\\s|$)`);
  const out: [number, number][] = [];
  for (let i = 0; i < lines.length; i++) {
    if (!head.test(lines[i]!)) continue;
    let end = i + 1;
    for (let j = i + 1; j < lines.length; j++) {
      const l = lines[j]!;
      if (l.trim() === "") continue;
      if (!/^([ \t]|-(\s|$))/.test(l)) break;
      end = j + 1;
    }
    out.push([i, end]);
    i = end - 1;
  }
  return out;
}

/** Whether the front matter is a block mapping (or empty), so a `key: value` line may be
 *  added to it; a list, a flow mapping or a lone scalar is not. */
export function isBlockMapping(yaml: string): boolean {
  const first = yaml.split("\n").find((l) => l.trim() !== "" && !/^\s*#/.test(l));
  return first === undefined || /^[^\s\-?[\]{}#&*!|>%@`,][^\n]*?:(\s|$)|^("[^"]*"|'[^']*')[ \t]*:(\s|$)/.test(first);
}

const ESCAPES: Record<string, string> = {
  "0": "\0", a: "\x07", b: "\b", t: "\t", "\t": "\t", n: "\n", v: "\v", f: "\f", r: "\r", e: "\x1b",
  " ": " ", '"': '"', "/": "/", "\\": "\\", N: "\u0085", _: "\u00a0", L: "\u2028", P: "\u2029",
};

/** A YAML double-quoted scalar's text (from after its opening quote), up to its closing quote. */
function doubleQuoted(raw: string): string {
  let out = "";
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i]!;
    if (c === '"') break;
    if (c !== "\\") {
      out += c;
      continue;
    }
    const e = raw[++i] ?? "";
    const hex = e === "x" ? 2 : e === "u" ? 4 : e === "U" ? 8 : 0;
    if (hex) {
      const code = parseInt(raw.slice(i + 1, i + 1 + hex), 16);
      if (Number.isFinite(code) && code <= 0x10ffff) out += String.fromCodePoint(code);
      i += hex;
    } else {
      out += ESCAPES[e] ?? e;
    }
  }
  return out;
}

/** The text of a top-level key's scalar value, its entry being `entry` among `lines`: a
 *  double-quoted (YAML escapes), single-quoted or plain scalar, or a `|` / `>` block;
 *  null for null, `~`, a flow list or mapping, or (`strict`) a boolean. A small reading
 *  of YAML, enough for what the app writes and for what people write by hand. */
export function scalarText(lines: string[], entry: [number, number], key: string, strict = false): string | null {
  const first = lines[entry[0]]!.replace(new RegExp(`^${key}[ \\t]*:`), "").trim();
  const rest = lines.slice(entry[0] + 1, entry[1]);
  if (/^[|>][+-]?\d*[+-]?(\s+#.*)?$/.test(first)) {
    const indent = Math.min(...rest.filter((l) => l.trim() !== "").map((l) => /^[ \t]*/.exec(l)![0].length));
    const body = rest.map((l) => l.slice(indent));
    return first.startsWith("|") ? body.join("\n") : body.map((l) => l.trim()).join(" ");
  }
  const joined = [first, ...rest.map((l) => l.trim())].filter((l) => l !== "").join(" ");
  if (joined.startsWith('"')) return doubleQuoted(joined.slice(1));
  if (joined.startsWith("'")) return (/^'((?:[^']|'')*)'?/.exec(joined)?.[1] ?? "").replace(/''/g, "'");
  const plain = joined.replace(/\s+#.*$/, "");
  if (/^(~|null)?$/i.test(plain)) return "";
  // The server (YAML 1.2) reads only strings and numbers as a title: a list, a mapping
  // or a boolean is none.
  if (strict && (/^([[{]|-(\s|$))/.test(plain) || /^(true|false)$/.test(plain))) return null;
  return plain;
}

/** The front matter's top-level `summary` as text (see scalarText); null when there is
 *  none, or it is empty or null. */
export function frontMatterSummary(markdown: string): string | null {
  const [yaml] = splitFrontMatter(markdown);
  if (yaml === null) return null;
  const lines = yaml.split("\n").map((l) => l.replace(/\r$/, ""));
  const entry = keyEntries(lines, "summary")[0];
  if (!entry) return null;
  const text = (scalarText(lines, entry, "summary") ?? "").trim();
  return text === "" ? null : text;
}
