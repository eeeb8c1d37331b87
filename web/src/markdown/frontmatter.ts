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
