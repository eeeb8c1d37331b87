#!/usr/bin/env python3
"""Generates a git repository shaped like Obsidian's help vault (obsidianmd/obsidian-help)
for timing `cairn import` of a long history (BENCHMARKS.md, "Import"), with no network.

    make_help_repo.py DIR [--languages 31] [--notes 6289] [--commits 1919] [--images 3000] [--seed 42]

The shape of the real repository at its head: one folder per language, the same note
names in many of them (`en/Canvas.md`, `de/Canvas.md`…), notes in a dozen subfolders,
2–4 KB each with wikilinks to notes of their language, callouts and image embeds;
thousands of images, mostly SVG; a first-parent history in which the English folder
grows first and each other language arrives later in one large commit, then is kept up
with small edits, renames and removals (a removed note sometimes comes back). Written
with `git fast-import`, so generating takes seconds.
"""

import argparse
import random
import subprocess

WORDS = ("canvas note vault link graph plugin theme sync publish file folder search tag property "
         "embed callout heading block page editor preview command palette workspace template").split()
SUBFOLDERS = ["Getting started", "Editing and formatting", "Linking notes and files", "Plugins",
              "Files and folders", "User interface", "Extending Obsidian", "Obsidian Sync",
              "Obsidian Publish", "Contributing", "Concepts", "Attachments"]
LANGUAGES = ["en", "de", "fr", "es", "it", "pt", "ja", "zh", "ko", "ru", "pl", "nl", "sv", "da",
             "nb", "fi", "cs", "hu", "ro", "tr", "uk", "el", "he", "ar", "fa", "hi", "id", "vi",
             "th", "ms", "ca"]


def svg(rng, i):
    shapes = "".join(
        f'<rect x="{rng.randrange(200)}" y="{rng.randrange(200)}" width="{rng.randrange(1, 80)}" '
        f'height="{rng.randrange(1, 80)}" fill="#{rng.randrange(0xffffff):06x}"/>'
        for _ in range(rng.randrange(20, 400)))
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="240" height="240" id="s{i}">'
            f'{shapes}</svg>\n').encode()


def png(rng, i):
    # The PNG signature and a header chunk, then noise: an upload is sniffed, not decoded.
    return (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + i.to_bytes(4, "big") * 2 + b"\x08\x02\x00\x00\x00"
            + rng.randbytes(rng.randrange(2_000, 60_000)))


class Repo:
    """A `git fast-import` stream of first-parent commits on `main`."""

    def __init__(self, path):
        subprocess.run(["git", "init", "-q", "-b", "main", path], check=True)
        self.proc = subprocess.Popen(["git", "fast-import", "--quiet"], cwd=path, stdin=subprocess.PIPE)
        self.n = 0

    def blob(self, data):
        self.n += 1
        self.proc.stdin.write(b"blob\nmark :%d\ndata %d\n" % (self.n, len(data)) + data + b"\n")
        return self.n

    def commit(self, who, when, message, changes):
        """changes: (path, mark) to write, (path, None) to delete, (old, ("R", new)) to rename."""
        msg = message.encode()
        out = [b"commit refs/heads/main\n",
               b"author %s <%s> %d +0000\n" % (who[0].encode(), who[1].encode(), when),
               b"committer %s <%s> %d +0000\n" % (who[0].encode(), who[1].encode(), when),
               b"data %d\n" % len(msg), msg, b"\n"]
        for path, what in changes:
            p = path.encode()
            if what is None:
                out.append(b'D "%s"\n' % p)
            elif isinstance(what, tuple):
                out.append(b'R "%s" "%s"\n' % (p, what[1].encode()))
            else:
                out.append(b'M 100644 :%d "%s"\n' % (what, p))
        self.proc.stdin.write(b"".join(out) + b"\n")

    def close(self):
        self.proc.stdin.close()
        if self.proc.wait() != 0:
            raise SystemExit("git fast-import failed")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--languages", type=int, default=31)
    ap.add_argument("--notes", type=int, default=6289)
    ap.add_argument("--commits", type=int, default=1919)
    ap.add_argument("--images", type=int, default=3000)
    ap.add_argument("--seed", type=int, default=42)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    langs = LANGUAGES[:a.languages]
    per_lang = a.notes // len(langs)
    # Note names: most shared by every language (as the help vault's are), some translated.
    names = [f"{rng.choice(WORDS).capitalize()} {rng.choice(WORDS)} {k}" for k in range(per_lang)]
    images_per_lang = a.images // len(langs)
    authors = [("Ann Writer", "ann@help.example"), ("Ben Writer", "ben@help.example"),
               ("Cy Translator", "cy@help.example"), ("Di Editor", "di@help.example")]

    def note_path(lang, k):
        name = names[k] if k % 4 else f"{names[k]} ({lang})"
        return f"{lang}/{SUBFOLDERS[k % (len(SUBFOLDERS) - 1)]}/{name}.md"

    def image_path(lang, j):
        ext = "svg" if j % 10 < 7 else "png"
        return f"{lang}/Attachments/image-{j}.{ext}"

    def note_text(lang, k, version):
        links = " ".join(f"[[{names[rng.randrange(per_lang)]}]]" for _ in range(4))
        body = "\n\n".join(" ".join(rng.choice(WORDS) for _ in range(rng.randrange(40, 90)))
                           for _ in range(rng.randrange(3, 6)))
        embed = f"![[image-{rng.randrange(images_per_lang)}.{'svg' if rng.random() < 0.7 else 'png'}]]"
        return (f"---\naliases: [{names[k]}]\n---\n# {names[k]}\n\n{body}\n\n"
                f"> [!note] Version {version}\n> See {links}.\n\n{embed}\n").encode()

    repo = Repo(a.dir)
    when = 1_600_000_000
    # The English folder grows first; each other language arrives in one commit, spread
    # over the history; the rest are small edits, renames and removals.
    arrivals = {c: langs[i + 1] for i, c in enumerate(
        sorted(rng.sample(range(a.commits // 10, a.commits - 10), len(langs) - 1)))}
    live = {}  # path -> (lang, k)
    removed = []
    versions = {}
    english_steps = max(1, a.commits // 10)
    for c in range(a.commits):
        who = authors[c % len(authors)]
        when += rng.randrange(600, 86_400)
        changes = []
        if c < english_steps:
            lo, hi = c * per_lang // english_steps, (c + 1) * per_lang // english_steps
            for k in range(lo, hi):
                path = note_path("en", k)
                changes.append((path, repo.blob(note_text("en", k, 1))))
                live[path] = ("en", k)
            lo, hi = c * images_per_lang // english_steps, (c + 1) * images_per_lang // english_steps
            for j in range(lo, hi):
                data = svg(rng, j) if j % 10 < 7 else png(rng, j)
                changes.append((image_path("en", j), repo.blob(data)))
            message = f"Write the English help, part {c + 1}"
        elif c in arrivals:
            lang = arrivals[c]
            for k in range(per_lang):
                path = note_path(lang, k)
                changes.append((path, repo.blob(note_text(lang, k, 1))))
                live[path] = (lang, k)
            for j in range(images_per_lang):
                data = svg(rng, j * 31 + len(lang)) if j % 10 < 7 else png(rng, j * 31 + len(lang))
                changes.append((image_path(lang, j), repo.blob(data)))
            message = f"Add the {lang} translation"
        else:
            paths = list(live)
            for path in rng.sample(paths, min(len(paths), rng.randrange(1, 5))):
                lang, k = live[path]
                versions[path] = versions.get(path, 1) + 1
                changes.append((path, repo.blob(note_text(lang, k, versions[path]))))
            if c % 37 == 0:
                edited = {p for p, _ in changes}
                old = rng.choice([p for p in paths if p not in edited])
                new = old[:-3] + " (renamed).md"
                changes.append((old, ("R", new)))
                live[new] = live.pop(old)
            elif c % 53 == 0:
                old = rng.choice(paths)
                if old in live:
                    changes = [ch for ch in changes if ch[0] != old] + [(old, None)]
                    removed.append((old, live.pop(old)))
            elif c % 97 == 0 and removed:
                path, (lang, k) = removed.pop(0)
                changes.append((path, repo.blob(note_text(lang, k, 1))))
                live[path] = (lang, k)
            message = f"Edit {len(changes)} notes"
        repo.commit(who, when, message, changes)
    repo.close()
    subprocess.run(["git", "checkout", "-q", "main"], cwd=a.dir, check=True)
    print(f"{a.dir}: {a.commits} commits, {len(live)} notes at the head, {len(langs)} languages")


if __name__ == "__main__":
    main()
