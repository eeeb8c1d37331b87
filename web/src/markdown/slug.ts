// Slug rules shared with the server (src/ids.rs): a slug is 1–128 characters
// that are lowercase or caseless letters (any script), digits, "-", "_" or "."; it does not
// start with "." or "-". A title becomes a slug by lower-casing it and turning runs of
// other characters into "-", trimmed, cut to 128.
const MAX = 128;

function slugChar(c: string): boolean {
  return (
    /\p{Lowercase}/u.test(c) ||
    (/\p{Alphabetic}/u.test(c) && !/\p{Uppercase}/u.test(c)) ||
    /\p{N}/u.test(c) ||
    c === "-" ||
    c === "_" ||
    c === "."
  );
}

function isValidSlug(slug: string): boolean {
  const chars = [...slug];
  return (
    chars.length >= 1 &&
    chars.length <= MAX &&
    !slug.startsWith(".") &&
    !slug.startsWith("-") &&
    chars.every(slugChar)
  );
}

export function deriveSlug(title: string): string {
  let out = "";
  let pendingDash = false;
  for (const ch of title) {
    for (const c of ch.toLowerCase()) {
      if (slugChar(c) && c !== "-") {
        if (pendingDash && out !== "") out += "-";
        pendingDash = false;
        out += c;
      } else {
        pendingDash = true;
      }
    }
  }
  const cut = [...out].slice(0, MAX).join("");
  return cut.replace(/^[.\-_]+/, "").replace(/-+$/, "");
}

/** The slug a wikilink target points to: the target itself when it is a slug. */
export function resolveTarget(target: string): string {
  return isValidSlug(target) ? target : deriveSlug(target);
}
