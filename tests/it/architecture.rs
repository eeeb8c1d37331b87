//! The shape of the code, checked from its source: the module import graph has no
//! circle, the layers below the core never reach up into it, and the HTTP door holds no
//! rule (no SQL, no error codes of its own). See docs/architecture.md.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Modules that sit below the core: they may not import it (nor any door).
const BELOW_CORE: &[&str] =
    &["auth", "ml", "store", "git", "markdown", "ids", "text", "time", "error", "config", "logging", "zlib"];
/// The doors and what assembles them: nothing below them may import these.
const ABOVE_CORE: &[&str] = &["http", "mcp", "app", "cli", "workers"];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every `.rs` file under `dir`.
fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// `src/core/pages/rows.rs` → `["core", "pages", "rows"]`; `mod.rs` and `lib.rs` name
/// their directory.
fn module_of(file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src()).unwrap();
    let mut parts: Vec<String> = rel.iter().map(|p| p.to_string_lossy().trim_end_matches(".rs").to_owned()).collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib" | "main")) {
        parts.pop();
    }
    parts
}

/// Whether `path` (module segments) is a module of the crate.
fn is_module(path: &[String]) -> bool {
    let base = path.iter().fold(src(), |p, s| p.join(s));
    base.with_extension("rs").is_file() || base.join("mod.rs").is_file()
}

/// The node a module belongs to in the graph: a top-level module, or a module of the
/// core one level down (`core::pages`), since the core is where the circles would hide.
fn node(path: &[String]) -> String {
    match path {
        [] => "crate".into(),
        [first, second, ..] if first == "core" && is_module(&path[..2]) => format!("core::{second}"),
        [first, ..] => first.clone(),
    }
}

/// The code of a file without its comments (doc links would count as imports).
fn code_of(text: &str) -> String {
    text.lines().map(|l| l.split("//").next().unwrap_or_default()).collect::<Vec<_>>().join("\n")
}

/// What the modules re-export (`pub use`, `pub(crate) use`…): for a module, the names it re-exports one by
/// one (name → the module that holds it) and the modules it re-exports whole (`*`).
#[derive(Default)]
struct Exports {
    named: BTreeMap<(Vec<String>, String), Vec<String>>,
    globs: BTreeMap<Vec<String>, Vec<Vec<String>>>,
}

impl Exports {
    fn read(all: &[PathBuf]) -> Exports {
        let mut ex = Exports::default();
        for f in all {
            let me = module_of(f);
            let code = code_of(&std::fs::read_to_string(f).unwrap());
            for stmt in code.split(';') {
                let Some(path) = ["pub use ", "pub(crate) use ", "pub(super) use "]
                    .iter()
                    .find_map(|re_export| stmt.trim().strip_prefix(re_export))
                else {
                    continue;
                };
                let mut items = Vec::new();
                expand(&me, path.trim(), &mut items);
                for (module, name) in items.into_iter().filter(|(_, name)| !name.is_empty()) {
                    if name == "*" {
                        ex.globs.entry(me.clone()).or_default().push(module);
                    } else {
                        ex.named.insert((me.clone(), name), module);
                    }
                }
            }
        }
        ex
    }

    /// The module that defines `name`, as seen through `module`'s re-exports; None when
    /// `module` does not re-export it (it is its own, or not a name of the crate).
    fn origin(&self, module: &[String], name: &str, depth: usize) -> Option<Vec<String>> {
        if depth > 8 {
            return None;
        }
        if let Some(from) = self.named.get(&(module.to_vec(), name.to_owned())) {
            return Some(self.origin(from, name, depth + 1).unwrap_or_else(|| from.clone()));
        }
        for glob in self.globs.get(module).into_iter().flatten() {
            if defines(glob, name) {
                return Some(self.origin(glob, name, depth + 1).unwrap_or_else(|| glob.clone()));
            }
        }
        None
    }
}

/// Whether the module file of `module` defines an item `name` others may use (`pub`,
/// `pub(crate)`, `pub(super)`).
fn defines(module: &[String], name: &str) -> bool {
    let base = module.iter().fold(src(), |p, s| p.join(s));
    let file = if base.with_extension("rs").is_file() { base.with_extension("rs") } else { base.join("mod.rs") };
    let code = std::fs::read_to_string(file).unwrap_or_default();
    let kinds = ["fn", "async fn", "struct", "enum", "type", "const", "static", "trait"];
    let shared = ["pub", "pub(crate)", "pub(super)"];
    kinds.iter().any(|kind| shared.iter().any(|vis| code.contains(&format!("{vis} {kind} {name}"))))
}

/// The (module, name) pairs a path names, from module `me`: `a::{b, c::D}` is two; a
/// module itself is (the module, ""). A leading `crate`, `super` or `self` is resolved;
/// a path into another crate (std, a dependency) names nothing.
fn expand(me: &[String], path: &str, out: &mut Vec<(Vec<String>, String)>) {
    let (mut at, mut rest, mut first) = (me.to_vec(), path, true);
    loop {
        rest = rest.trim_start();
        if let Some(group) = rest.strip_prefix('{') {
            for item in top_level(&group[..closing(group)]) {
                match item.trim() {
                    "self" => out.push((at.clone(), String::new())),
                    // Relative to the group's module, not a crate name.
                    item => expand(&at, &format!("self::{item}"), out),
                }
            }
            return;
        }
        let seg: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '*').collect();
        if seg.is_empty() {
            out.push((at, String::new()));
            return;
        }
        let next = match (first, seg.as_str()) {
            (true, "crate") => Some(Vec::new()),
            (_, "super") => Some(at[..at.len().saturating_sub(1)].to_vec()),
            (true, "self") => Some(at.clone()),
            _ => {
                let mut n = at.clone();
                n.push(seg.clone());
                is_module(&n).then_some(n)
            }
        };
        let tail = rest[seg.len()..].trim_start();
        match (next, tail.strip_prefix("::")) {
            (Some(n), Some(t)) => (at, rest) = (n, t),
            (Some(n), None) => {
                out.push((n, String::new()));
                return;
            }
            (None, _) if first => return,
            (None, _) => {
                out.push((at, seg));
                return;
            }
        }
        first = false;
    }
}

/// Where the group opened before `text` closes.
fn closing(text: &str) -> usize {
    let mut depth = 0;
    for (i, c) in text.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => return i,
            '}' => depth -= 1,
            _ => {}
        }
    }
    text.len()
}

/// The comma-separated items of a group, nested groups kept whole.
fn top_level(text: &str) -> Vec<&str> {
    let (mut out, mut depth, mut start) = (Vec::new(), 0, 0);
    for (i, c) in text.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                out.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&text[start..]);
    out.into_iter().filter(|s| !s.trim().is_empty()).collect()
}

/// Module paths a file refers to through `crate::…` and `super::…`, groups
/// (`crate::core::{pages, users::User}`) expanded, and a name a module re-exports
/// (`crate::Ctx`, `store::Backend`) counted as the module that defines it.
fn references(file: &Path, text: &str, exports: &Exports) -> Vec<Vec<String>> {
    let me = module_of(file);
    let mut out = Vec::new();
    for prefix in ["crate::", "super::"] {
        let mut rest = text;
        while let Some(i) = rest.find(prefix) {
            let before = rest[..i].chars().next_back();
            let start = &rest[i..];
            rest = &rest[i + prefix.len()..];
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
                continue;
            }
            // The path as written, up to what cannot be part of it.
            let mut end = 0;
            let mut depth = 0;
            for (k, c) in start.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    c if depth > 0 || c.is_alphanumeric() || c == '_' || c == ':' || c == '*' => {}
                    _ => break,
                }
                end = k + c.len_utf8();
            }
            let mut items = Vec::new();
            expand(&me, &start[..end], &mut items);
            for (module, name) in items {
                out.push(exports.origin(&module, &name, 0).unwrap_or(module));
            }
        }
    }
    out
}

fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let mut all = Vec::new();
    files(&src(), &mut all);
    let exports = Exports::read(&all);
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in all {
        let text = code_of(&std::fs::read_to_string(&f).unwrap());
        let from = node(&module_of(&f));
        let entry = edges.entry(from.clone()).or_default();
        for r in references(&f, &text, &exports) {
            let to = node(&r);
            if to != from && to != "crate" {
                entry.insert(to);
            }
        }
    }
    edges
}

#[test]
fn the_module_graph_has_no_circle() {
    let g = graph();
    // Depth-first search with colours; report the first circle found, whole.
    fn visit(
        n: &str,
        g: &BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<String, u8>,
        stack: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        state.insert(n.to_owned(), 1);
        stack.push(n.to_owned());
        for m in g.get(n).into_iter().flatten() {
            match state.get(m).copied().unwrap_or(0) {
                1 => {
                    let start = stack.iter().position(|s| s == m).unwrap();
                    let mut cycle = stack[start..].to_vec();
                    cycle.push(m.clone());
                    return Some(cycle);
                }
                0 => {
                    if let Some(c) = visit(m, g, state, stack) {
                        return Some(c);
                    }
                }
                _ => {}
            }
        }
        stack.pop();
        state.insert(n.to_owned(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for n in g.keys() {
        if state.get(n).copied().unwrap_or(0) == 0
            && let Some(cycle) = visit(n, &g, &mut state, &mut Vec::new())
        {
            panic!("import circle: {}", cycle.join(" → "));
        }
    }
    // The check sees the modules it should.
    for expected in ["core::pages", "core::accounts", "core::workspaces", "http", "auth", "markdown"] {
        assert!(g.contains_key(expected), "{expected} missing from {:?}", g.keys());
    }
    assert!(g["http"].contains("core::pages"), "the graph misses http → core::pages");
}

#[test]
fn nothing_below_the_core_reaches_up() {
    let g = graph();
    for low in BELOW_CORE {
        for to in g.get(*low).into_iter().flatten() {
            let up = to == "core" || to.starts_with("core::") || ABOVE_CORE.contains(&to.as_str());
            assert!(!up, "{low} imports {to}: only the doors and the core may depend on the core");
        }
    }
    for core in g.keys().filter(|k| *k == "core" || k.starts_with("core::")) {
        for to in &g[core] {
            assert!(!ABOVE_CORE.contains(&to.as_str()), "{core} imports the door {to}");
        }
    }
}

#[test]
fn the_doors_hold_no_rule() {
    let mut all = Vec::new();
    files(&src().join("http"), &mut all);
    files(&src().join("mcp"), &mut all);
    for f in all {
        let code = code_of(&std::fs::read_to_string(&f).unwrap());
        for forbidden in ["sqlx::", "AssertSqlSafe", "Error::new(", "StatusCode::BAD_REQUEST", "StatusCode::CONFLICT"] {
            assert!(!code.contains(forbidden), "{} uses {forbidden}: rules and SQL belong in the core", f.display());
        }
    }
}

/// Fails when a file outside `homes` (paths under `src/`) names one of `words` in its
/// code: a rule kept in one place.
fn only_in(homes: &[&str], words: &[&str], instead: &str) {
    let mut all = Vec::new();
    files(&src(), &mut all);
    let homes: Vec<PathBuf> = homes.iter().map(|h| src().join(h)).collect();
    for f in all.iter().filter(|f| !homes.iter().any(|h| f.starts_with(h))) {
        let code = code_of(&std::fs::read_to_string(f).unwrap());
        for word in words {
            assert!(!code.contains(word), "{} names `{word}`; {instead}", f.display());
        }
    }
}

#[test]
fn access_is_built_only_by_the_workspaces_module() {
    only_in(&["core/workspaces.rs"], &["Access {"], "use workspaces::access or Access::maintenance");
}

#[test]
fn membership_is_read_only_by_the_workspaces_module() {
    // Who may see a workspace is decided in one place: every other module asks
    // `workspaces::access` (or takes the `Access` it made) instead of joining memberships.
    only_in(&["core/workspaces.rs", "store"], &["memberships"], "ask core::workspaces for an Access instead");
}

#[test]
fn transactions_begin_in_the_store() {
    // A deferred SQLite transaction that reads and then writes fails when another
    // connection commits in between; `Db::write` takes the write lock at its start.
    only_in(&["store"], &["pool.begin()"], "begin with Db::write (or Db::snapshot to read)");
}

#[test]
fn page_sql_lives_in_the_pages_module() {
    // The index of pages (rows, revisions, tags, links, heads, counters) is read and
    // written by `core::pages` alone (`rows` and the full-text index's `fulltext`), so
    // how a row keeps its markdown (`content_z`) is known in one place.
    let named = [
        "FROM pages",
        "JOIN pages",
        "UPDATE pages",
        "INTO pages ",
        "page_tags",
        "page_links",
        "content_z",
        "FROM revisions",
        "INTO revisions",
        "JOIN revisions",
        "revision_aliases",
        "workspace_heads",
        "index_seqs",
    ];
    only_in(&["core/pages", "store"], &named, "page SQL belongs in core::pages::rows");
}

#[test]
fn imports_are_followed_through_groups_and_re_exports() {
    let mut all = Vec::new();
    files(&src(), &mut all);
    let exports = Exports::read(&all);
    let file = src().join("core/semantic/embed.rs");
    let text = "use crate::core::{Ctx, pages::rows::texts};\nlet c: crate::testing::Ctx;\nlet b = crate::store::Backend::Sqlite;";
    let found: BTreeSet<Vec<String>> = references(&file, text, &exports).into_iter().collect();
    let path = |p: &str| p.split("::").map(str::to_owned).collect::<Vec<_>>();
    for expected in ["core", "core::pages::rows::derived", "config"] {
        assert!(found.contains(&path(expected)), "{expected} not found in {found:?}");
    }
}
