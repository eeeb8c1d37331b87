// The words marked within a changed line of the history's diff (src/wordDiff.ts), and
// the diff rows built from the server's unified diff (src/screens/History.tsx).
import { describe, expect, test } from "vitest";
import { inlineLines, sideBySide } from "./screens/History";
import { tokens, wordDiff } from "./wordDiff";

const changed = (pieces: { text: string; changed: boolean }[]) => pieces.filter((p) => p.changed).map((p) => p.text);

describe("word diff", () => {
  test("tokens keep every character", () => {
    const line = "Restart the *api* (port 8090), then — wait.";
    expect(tokens(line).join("")).toBe(line);
  });

  test("one changed word is marked on each side", () => {
    const w = wordDiff("Restart the server, then check the status page.", "Restart the proxy, then check the status page.")!;
    expect(changed(w.removed)).toEqual(["server"]);
    expect(changed(w.added)).toEqual(["proxy"]);
    expect(w.removed.map((p) => p.text).join("")).toBe("Restart the server, then check the status page.");
  });

  test("neighbouring changed words are one mark", () => {
    const w = wordDiff("We meet on Monday at noon in room 4.", "We meet on Friday after lunch in room 4.")!;
    expect(changed(w.removed)).toEqual(["Monday at noon"]);
    expect(changed(w.added)).toEqual(["Friday after lunch"]);
  });

  test("an added word only on the new side", () => {
    const w = wordDiff("Deploy on Fridays.", "Never deploy on Fridays.")!;
    expect(changed(w.removed)).toEqual(["Deploy"]);
    expect(changed(w.added)).toEqual(["Never deploy"]);
  });

  test("lines with little in common get no word marks", () => {
    expect(wordDiff("The quick brown fox jumps.", "Lorem ipsum dolor sit amet.")).toBeNull();
    expect(wordDiff("", "text")).toBeNull();
  });

  test("very long lines are not compared", () => {
    const long = Array.from({ length: 600 }, (_, i) => `w${i}`).join(" ");
    expect(wordDiff(long, long + " x")).toBeNull();
  });
});

const unified = [
  "--- a/page.md",
  "+++ b/page.md",
  "@@ -1,3 +1,3 @@",
  " # Runbook",
  "-Restart the server, then check the status page.",
  "+Restart the proxy, then check the status page.",
  " Done.",
  "",
].join("\n");

describe("diff rows", () => {
  test("inline: the paired lines carry their marked words", () => {
    const lines = inlineLines(unified);
    expect(lines.map((l) => l.kind)).toEqual(["hunk", "", "del", "add", ""]);
    expect(changed(lines[2]!.pieces!)).toEqual(["server"]);
    expect(changed(lines[3]!.pieces!)).toEqual(["proxy"]);
    expect(lines[3]!.pieces!.map((p) => p.text).join("")).toBe("+Restart the proxy, then check the status page.");
  });

  test("side by side: the same marks, line numbers kept", () => {
    const rows = sideBySide(unified);
    const row = rows.find((r) => r.changed)!;
    expect(row.left!.no).toBe(2);
    expect(row.right!.no).toBe(2);
    expect(changed(row.left!.pieces!)).toEqual(["server"]);
    expect(changed(row.right!.pieces!)).toEqual(["proxy"]);
  });

  test("an added line without a partner is marked as a whole", () => {
    const lines = inlineLines("@@ -1 +1,2 @@\n a\n+brand new line\n");
    expect(lines[2]).toEqual({ kind: "add", text: "+brand new line", pieces: null });
  });
});
