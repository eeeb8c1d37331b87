#!/usr/bin/env python3
"""Checks a `cairn import` of a git repository against the repository, file by file.

    check_history.py SOURCE DATA_DIR WORKSPACE REPORT.json [--show 20]

SOURCE is the imported repository, DATA_DIR the Cairn data folder it went into (SQLite,
`DATA_DIR/cairn.db`), WORKSPACE the workspace's slug, REPORT the import's `--report`.
It checks, for every file and page (not a sample):

- every non-hidden `.md` at the head of SOURCE is one live page, under the page of its
  folder, holding the file's text (links may differ: the import rewrites them);
- no other page is live, except folder pages;
- every such page's revisions are the source commits that changed its file, as
  `git log --follow --first-parent` lists them: the revisions' `Cairn-Import-Commit`
  trailers against the history of the file, followed across git's renames.

The file histories are read in one pass (`git log --first-parent -M --name-status` over
the markdown files, as the import compares them), renames followed as `--follow`
follows them. Differences are printed by kind; the exit
code is 0 when there are none (or, with --allow-history-differences N, when at most N
files' revisions differ from git's and nothing else does), 1 otherwise.
"""

import argparse
import collections
import json
import sqlite3
import subprocess
import sys
import zlib


def git(repo, *args):
    return subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True).stdout.decode()


def hidden(path):
    return any(part.startswith(".") for part in path.split("/"))


def is_md(path):
    lower = path.lower()
    return lower.endswith(".md") or lower.endswith(".markdown")


def file_histories(source):
    """Each head file's first-parent history, oldest first, renames followed."""
    out = git(source, "-c", "core.quotePath=false", "log", "--first-parent", "--diff-merges=first-parent",
              "-M", "--name-status", "--reverse", "--format=@%H", "--", ":(icase)*.md", ":(icase)*.markdown")
    lives = {}
    # A path removed and added again later is one history for `--follow` (it walks the
    # path back through the removal when the add has no rename source); a path a rename
    # arrives at is the renamed file's history only (`--follow` turns to the old path).
    removed = {}
    commit = None
    for line in out.splitlines():
        if line.startswith("@"):
            commit = line[1:]
            continue
        if not line.strip():
            continue
        parts = line.split("\t")
        status = parts[0]
        if status.startswith("R"):
            old, new = parts[1], parts[2]
            removed.pop(new, None)
            lives[new] = lives.pop(old, []) + [commit]
        elif status.startswith("D"):
            removed[parts[1]] = lives.pop(parts[1], []) + [commit]
        elif status.startswith("A"):
            lives[parts[1]] = removed.pop(parts[1], []) + [commit]
        elif status[0] in "MT":
            lives.setdefault(parts[1], []).append(commit)
        elif status.startswith("C"):
            lives[parts[2]] = [commit]
    return lives


def cairn_import_commits(data_dir, workspace):
    """Cairn commit → the source commit it replays."""
    repo = f"{data_dir}/workspaces/{workspace}.git"
    out = git(repo, "log", "--format=%x01%H%n%B")
    found = {}
    for entry in out.split("\x01")[1:]:
        sha, _, body = entry.partition("\n")
        for line in body.splitlines():
            if line.startswith("Cairn-Import-Commit:"):
                found[sha] = line.split(":", 1)[1].strip()
    return found


def folder_page(folder, slug_of, head_lower):
    """The slug of a folder's page: its note's (beside it, inside it with its name,
    index.md, README.md; names compared without case), else the folder's own."""
    name = folder.rsplit("/", 1)[-1]
    for candidate in (folder, f"{folder}/{name}", f"{folder}/index", f"{folder}/readme"):
        for ext in (".md", ".markdown"):
            path = head_lower.get((candidate + ext).lower())
            if path is not None and path in slug_of:
                return slug_of[path]
    return slug_of.get(folder + "/")


def content_of(row):
    content, content_z = row
    if content_z:
        return zlib.decompress(content_z).decode()
    return content


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("source")
    ap.add_argument("data_dir")
    ap.add_argument("workspace")
    ap.add_argument("report")
    ap.add_argument("--show", type=int, default=20, help="examples printed per kind")
    ap.add_argument("--allow-history-differences", type=int, default=0, metavar="N",
                    help="pass when the only differences are at most N files whose revisions differ from "
                         "git's (the kinds docs/import.md lists); pages, tree and text must match")
    args = ap.parse_args()

    head = [p for p in git(args.source, "-c", "core.quotePath=false", "ls-tree", "-r", "--name-only", "HEAD")
            .splitlines() if is_md(p) and not hidden(p)]
    histories = file_histories(args.source)
    replays = cairn_import_commits(args.data_dir, args.workspace)
    report = json.load(open(args.report))
    # A file may have had several pages over the history (one trashed, a later one live):
    # its page is the live one.
    entries_of = collections.defaultdict(list)
    for e in report["pages"]:
        entries_of[e["source"]].append(e["slug"])

    db = sqlite3.connect(f"{args.data_dir}/cairn.db")
    (ws,) = db.execute("SELECT id FROM workspaces WHERE slug = ?", (args.workspace,)).fetchone()
    pages = {slug: (pid, parent, deleted) for pid, slug, parent, deleted in
             db.execute("SELECT id, slug, parent_id, deleted_at FROM pages WHERE workspace_id = ?", (ws,))}
    slug_by_id = {pid: slug for slug, (pid, _, _) in pages.items()}
    slug_of = {}
    for source, slugs in entries_of.items():
        live = [s for s in slugs if s in pages and not pages[s][2]]
        slug_of[source] = (live or slugs)[0]
    revisions = collections.defaultdict(list)
    for pid, sha in db.execute("SELECT page_id, sha FROM revisions WHERE workspace_id = ? ORDER BY id", (ws,)):
        revisions[pid].append(sha)

    head_lower = {p.lower(): p for p in head}
    problems = collections.defaultdict(list)
    explained = set()
    folder_slugs = {e["slug"] for e in report["pages"] if e["source"].endswith("/")}
    for path in head:
        slug = slug_of.get(path)
        if slug is None or slug not in pages:
            problems["head file without a page"].append(path)
            continue
        pid, parent, deleted = pages[slug]
        explained.add(slug)
        if deleted:
            problems["head file whose page is in the trash"].append(f"{path} → {slug}")
            continue
        folder = path.rsplit("/", 1)[0] if "/" in path else None
        want_parent = folder_page(folder, slug_of, head_lower) if folder is not None else None
        got_parent = slug_by_id.get(parent)
        if want_parent is not None and got_parent != want_parent and slug != want_parent:
            problems["page under another folder's page"].append(f"{path}: under {got_parent}, not {want_parent}")
        row = db.execute("SELECT content, content_z FROM pages WHERE id = ?", (pid,)).fetchone()
        text = git(args.source, "show", f"HEAD:{path}")
        if content_of(row) != text and "[[" not in text and "](" not in text:
            problems["page text differs (no link to rewrite)"].append(path)
        replayed = [replays.get(sha) for sha in revisions[pid]]
        counted = collections.Counter(c for c in replayed if c)
        want = histories.get(path, [])
        missing = [c for c in want if c not in counted]
        extra = [c for c in counted if c not in set(want)]
        twice = [c for c, n in counted.items() if n > 1]
        if missing:
            problems["revisions missing (a source commit changed the file)"].append(
                f"{path}: {len(missing)} of {len(want)}, e.g. {missing[0][:10]}")
        if extra:
            problems["revisions no commit of the file explains"].append(
                f"{path}: {len(extra)}, e.g. {extra[0][:10]}")
        if twice:
            problems["source commits with more than one revision"].append(
                f"{path}: {len(twice)}, e.g. {twice[0][:10]}")

    for slug, (pid, _, deleted) in pages.items():
        if not deleted and slug not in explained and slug not in folder_slugs:
            problems["live page no head file explains"].append(slug)

    print(f"{len(head)} notes at the head of {args.source}; {sum(1 for p in pages.values() if not p[2])} live pages")
    for kind, items in sorted(problems.items()):
        print(f"\n{kind}: {len(items)}")
        for item in items[:args.show]:
            print(f"  {item}")
    if not problems:
        print("every file's page and history match")
    history_kinds = {"revisions missing (a source commit changed the file)",
                     "revisions no commit of the file explains"}
    differing = {item.split(":")[0] for kind in history_kinds for item in problems.get(kind, [])}
    structural = [kind for kind in problems if kind not in history_kinds]
    ok = not structural and len(differing) <= args.allow_history_differences
    if problems and ok:
        print(f"\n{len(differing)} files' histories differ from git's (at most {args.allow_history_differences} allowed)")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
