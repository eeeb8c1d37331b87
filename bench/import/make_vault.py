#!/usr/bin/env python3
"""Generates the vaults `cairn import` is timed on (BENCHMARKS.md, "Import").

    make_vault.py DIR [--notes 10000] [--git-commits 0] [--seed 42]

A folder of NOTES markdown notes in 20 x 25 nested folders, each about 700 bytes with
front matter, three [[Note N]] wikilinks and a #tag; names repeat across folders, so
some collide (suffixed and reported by the import). With --git-commits C the folder is
also a git repository: a first commit with every note, then C commits by four authors,
each editing three notes, every 25th renaming one and every 40th deleting one.
"""

import argparse
import os
import random
import subprocess

WORDS = ("wiki page note team plan design review deploy service index search link tag "
         "history commit save merge branch draft summary guide policy release budget").split()


def note(rng, i, notes):
    links = " ".join(f"[[Note {rng.randrange(notes)}]]" for _ in range(3))
    body = " ".join(rng.choice(WORDS) for _ in range(90))
    return f"---\ntitle: Note {i}\ntags: [bench]\n---\n# Note {i}\n\n{body}\n\nSee {links}. #t{i % 50}\n"


def path_of(i):
    return os.path.join(f"Area {i % 20}", f"Topic {(i // 20) % 25}", f"Note {i % 2000}.md")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--notes", type=int, default=10000)
    ap.add_argument("--git-commits", type=int, default=0)
    ap.add_argument("--seed", type=int, default=42)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    paths, taken = {}, set()
    for i in range(a.notes):
        p = path_of(i)
        if p in taken:
            p = p[:-3] + f" {i}.md"
        paths[i] = p
        taken.add(p)
        full = os.path.join(a.dir, p)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w") as f:
            f.write(note(rng, i, a.notes))
    if not a.git_commits:
        return
    authors = [("Ann Author", "ann@bench.example"), ("Ben Author", "ben@bench.example"),
               ("Cy Author", "cy@bench.example"), ("Di Author", "di@bench.example")]

    def git(*args, who=authors[0], when=0):
        env = dict(os.environ, GIT_AUTHOR_NAME=who[0], GIT_AUTHOR_EMAIL=who[1],
                   GIT_COMMITTER_NAME=who[0], GIT_COMMITTER_EMAIL=who[1],
                   GIT_AUTHOR_DATE=f"{1600000000 + when * 3600} +0000",
                   GIT_COMMITTER_DATE=f"{1600000000 + when * 3600} +0000")
        subprocess.run(["git", *args], cwd=a.dir, env=env, check=True, stdout=subprocess.DEVNULL)

    git("init", "-q", "-b", "main")
    git("add", "-A")
    git("commit", "-q", "-m", "All notes")
    live = list(paths)
    for c in range(1, a.git_commits + 1):
        who = authors[c % len(authors)]
        if c % 40 == 0 and len(live) > 10:
            i = live.pop(rng.randrange(len(live)))
            git("rm", "-q", paths[i], who=who, when=c)
        elif c % 25 == 0:
            i = rng.choice(live)
            new = paths[i][:-3] + " renamed.md"
            git("mv", paths[i], new, who=who, when=c)
            paths[i] = new
        for i in rng.sample(live, 3):
            with open(os.path.join(a.dir, paths[i]), "a") as f:
                f.write(f"\nEdit {c} by {who[0]}.\n")
        git("add", "-A", who=who, when=c)
        git("commit", "-q", "-m", f"Edit {c}", who=who, when=c)


if __name__ == "__main__":
    main()
