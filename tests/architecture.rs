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

/// Module paths a file refers to through `crate::…` and `super::…`.
fn references(file: &Path, text: &str) -> Vec<Vec<String>> {
    let me = module_of(file);
    let mut out = Vec::new();
    for (prefix, base) in [("crate::", Vec::new()), ("super::", me[..me.len().saturating_sub(1)].to_vec())] {
        let mut rest = text;
        while let Some(i) = rest.find(prefix) {
            let before = rest[..i].chars().next_back();
            rest = &rest[i + prefix.len()..];
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
                continue;
            }
            let mut path = base.clone();
            // Follow lower-case segments while they are modules.
            let mut tail = rest;
            loop {
                let seg: String =
                    tail.chars().take_while(|c| c.is_ascii_lowercase() || *c == '_' || c.is_ascii_digit()).collect();
                if seg.is_empty() {
                    break;
                }
                let mut next = path.clone();
                next.push(seg.clone());
                if !is_module(&next) {
                    break;
                }
                path = next;
                match tail[seg.len()..].strip_prefix("::") {
                    Some(t) => tail = t,
                    None => break,
                }
            }
            out.push(path);
        }
    }
    out
}

fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let mut all = Vec::new();
    files(&src(), &mut all);
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in all {
        let text = code_of(&std::fs::read_to_string(&f).unwrap());
        let from = node(&module_of(&f));
        let entry = edges.entry(from.clone()).or_default();
        for r in references(&f, &text) {
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

#[test]
fn access_is_built_only_by_the_workspaces_module() {
    let mut all = Vec::new();
    files(&src(), &mut all);
    for f in all {
        let code = code_of(&std::fs::read_to_string(&f).unwrap());
        let builds = code.contains("Access {");
        let home = f.ends_with("core/workspaces.rs");
        assert!(
            !builds || home,
            "{} builds an Access itself; use workspaces::access or Access::maintenance",
            f.display()
        );
    }
}
