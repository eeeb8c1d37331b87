//! A deterministic corpus of wiki pages: markdown of 2–5 KB with headings, prose from a
//! word list, bullet lists, an occasional fenced code block, `#tags` and 3–8
//! `[[wikilinks]]` (some broken), arranged as a tree of depth at most 4.
//!
//! Page `i` is generated from its own ChaCha stream (the seed, stream `i`), so the first
//! N pages of a corpus are the same whatever its total size: a 1k run and a 10k run share
//! their first thousand pages.

use rand::seq::IndexedRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Deepest level of the page tree (top-level pages are depth 1).
pub const MAX_DEPTH: u8 = 4;
/// Share of pages that are top-level (apart from page 0, which always is).
const TOP_LEVEL_SHARE: f64 = 0.10;
/// Share of wikilinks that point at no page.
const BROKEN_LINK_SHARE: f64 = 0.15;

pub struct Page {
    pub slug: String,
    pub title: String,
    /// Index of the parent page, always lower than this page's index.
    pub parent: Option<usize>,
    pub depth: u8,
    pub content: String,
}

/// A ChaCha RNG for one purpose: the seed, and a stream named by `label` and `n`.
pub fn rng_for(seed: u64, label: &str, n: u64) -> ChaCha8Rng {
    // FNV-1a of the label, mixed with n: streams of different labels never collide in practice.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in label.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(h.wrapping_add(n.wrapping_mul(0x9e37_79b9_7f4a_7c15)));
    rng
}

/// The first `n` pages of the corpus for `seed`.
pub fn generate(seed: u64, n: usize) -> Vec<Page> {
    let mut pages: Vec<Page> = Vec::with_capacity(n);
    for i in 0..n {
        let mut rng = rng_for(seed, "page", i as u64);
        let title = title(&mut rng);
        let slug = format!("{}-{i}", slugify(&title));
        let (parent, depth) = pick_parent(&mut rng, &pages, i);
        let links = links_to(&mut rng, &pages, i);
        let content = body(&mut rng, &title, &links);
        pages.push(Page { slug, title, parent, depth, content });
    }
    pages
}

fn pick_parent(rng: &mut ChaCha8Rng, pages: &[Page], i: usize) -> (Option<usize>, u8) {
    if i == 0 || rng.random_bool(TOP_LEVEL_SHARE) {
        return (None, 1);
    }
    // A random earlier page that is not yet at the deepest level; a few tries suffice
    // because most pages are shallower than MAX_DEPTH.
    // The shallower of two random picks, so the tree is bushier near the top than a
    // uniformly random choice would make it.
    for _ in 0..16 {
        let (a, b) = (rng.random_range(0..i), rng.random_range(0..i));
        let p = if pages[b].depth < pages[a].depth { b } else { a };
        if pages[p].depth < MAX_DEPTH {
            return (Some(p), pages[p].depth + 1);
        }
    }
    (None, 1)
}

/// 3–8 link targets: earlier pages of the corpus (so they exist in every prefix), or a
/// slug that no page has.
fn links_to(rng: &mut ChaCha8Rng, pages: &[Page], i: usize) -> Vec<(String, String)> {
    let n = rng.random_range(3..=8);
    (0..n)
        .map(|_| {
            if i == 0 || rng.random_bool(BROKEN_LINK_SHARE) {
                let t = format!("{} {}", cap(pick(rng, NOUNS)), pick(rng, NOUNS));
                (format!("missing-{}", slugify(&t)), t)
            } else {
                let p = &pages[rng.random_range(0..i)];
                (p.slug.clone(), p.title.clone())
            }
        })
        .collect()
}

/// Corpus-like content for a page outside the corpus (the measured creates): links go to
/// the first `existing` corpus pages.
pub fn extra_page(rng: &mut ChaCha8Rng, corpus: &[Page], existing: usize) -> (String, String) {
    let title = title(rng);
    let links = links_to(rng, &corpus[..existing.min(corpus.len())], existing.min(corpus.len()));
    let content = body(rng, &title, &links);
    (title, content)
}

/// An edit of `content` as a person would make it: one paragraph rewritten, a bullet
/// added or removed, or a sentence appended. The size stays about the same.
pub fn edit(rng: &mut ChaCha8Rng, content: &str) -> String {
    let mut lines: Vec<String> = content.lines().map(str::to_owned).collect();
    let mut in_code = false;
    let mut paragraphs = Vec::new();
    let mut bullets = Vec::new();
    for (n, l) in lines.iter().enumerate() {
        if l.starts_with("```") {
            in_code = !in_code;
            continue;
        }
        if in_code || l.is_empty() || l.starts_with('#') || l.starts_with("Tags:") {
            continue;
        }
        if l.starts_with("- ") {
            bullets.push(n);
        } else {
            paragraphs.push(n);
        }
    }
    match rng.random_range(0..10) {
        0..6 if !paragraphs.is_empty() => {
            let n = *paragraphs.choose(rng).unwrap();
            let keep_links: Vec<String> = extract_links(&lines[n]);
            let mut p = paragraph(rng, 2..=4, &mut Vec::new());
            for l in keep_links {
                p.push(' ');
                p.push_str(&format!("See {l}."));
            }
            lines[n] = p;
        }
        6..8 if !bullets.is_empty() => {
            let n = *bullets.choose(rng).unwrap();
            if rng.random_bool(0.5) && bullets.len() > 2 && !lines[n].contains("[[") {
                lines.remove(n);
            } else {
                lines.insert(n + 1, format!("- {}", sentence(rng, 4..=10, &mut Vec::new())));
            }
        }
        _ => {
            if let Some(&n) = paragraphs.last() {
                let s = sentence(rng, 8..=16, &mut Vec::new());
                lines[n].push(' ');
                lines[n].push_str(&s);
            } else {
                lines.push(sentence(rng, 8..=16, &mut Vec::new()));
            }
        }
    }
    let mut out = lines.join("\n");
    out.push('\n');
    out
}

fn extract_links(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(a) = rest.find("[[") {
        let Some(b) = rest[a..].find("]]") else { break };
        out.push(rest[a..a + b + 2].to_owned());
        rest = &rest[a + b + 2..];
    }
    out
}

fn body(rng: &mut ChaCha8Rng, title: &str, links: &[(String, String)]) -> String {
    // Links become inline `[[slug]]` or `[[slug|label]]` pieces the prose takes in order;
    // whatever is left over goes into a "See also" list.
    let mut pending: Vec<String> = links
        .iter()
        .map(|(slug, label)| if rng.random_bool(0.5) { format!("[[{slug}]]") } else { format!("[[{slug}|{label}]]") })
        .rev()
        .collect();
    let tags: Vec<&str> = {
        let k = rng.random_range(1..=4);
        TAGS.choose_multiple(rng, k).copied().collect()
    };
    let target = rng.random_range(2000..4200);
    let mut s = format!("# {title}\n\n{}\n\n", paragraph(rng, 2..=4, &mut pending));
    while s.len() < target {
        let before = pending.clone();
        let mut sec = format!("## {}\n\n", heading(rng));
        for _ in 0..rng.random_range(1..=2) {
            sec.push_str(&paragraph(rng, 3..=6, &mut pending));
            sec.push_str("\n\n");
        }
        if rng.random_bool(0.5) {
            for _ in 0..rng.random_range(2..=5) {
                sec.push_str(&format!("- {}\n", sentence(rng, 4..=10, &mut pending)));
            }
            sec.push('\n');
        }
        if rng.random_bool(0.08) {
            sec.push_str(&code_block(rng));
            sec.push('\n');
        }
        // Keep pages under 5 KB: leave room for the "See also" list and the tags.
        let reserve = 80 + pending.iter().map(|l| l.len() + 3).sum::<usize>() + if pending.is_empty() { 0 } else { 16 };
        if s.len() + sec.len() + reserve > 5000 {
            pending = before;
            break;
        }
        s.push_str(&sec);
    }
    if !pending.is_empty() {
        s.push_str("## See also\n\n");
        while let Some(l) = pending.pop() {
            s.push_str(&format!("- {l}\n"));
        }
        s.push('\n');
    }
    let tag_line: Vec<String> = tags.iter().map(|t| format!("#{t}")).collect();
    s.push_str(&format!("Tags: {}\n", tag_line.join(" ")));
    s
}

fn paragraph(rng: &mut ChaCha8Rng, n: std::ops::RangeInclusive<usize>, links: &mut Vec<String>) -> String {
    let k = rng.random_range(n);
    (0..k).map(|_| sentence(rng, 8..=20, links)).collect::<Vec<_>>().join(" ")
}

fn sentence(rng: &mut ChaCha8Rng, n: std::ops::RangeInclusive<usize>, links: &mut Vec<String>) -> String {
    let k = rng.random_range(n);
    let mut words: Vec<String> = Vec::with_capacity(k + 2);
    for w in 0..k {
        let word = match w % 4 {
            0 => pick(rng, ADJECTIVES),
            1 | 3 => pick(rng, NOUNS),
            _ => pick(rng, VERBS),
        };
        let word = if rng.random_bool(0.25) { pick(rng, SMALL) } else { word };
        words.push(word.to_owned());
        if w > 2 && w + 2 < k && rng.random_bool(0.08) {
            let last = words.last_mut().unwrap();
            last.push(',');
        }
    }
    if rng.random_bool(0.18)
        && let Some(l) = links.pop()
    {
        let at = rng.random_range(1..=words.len());
        words.insert(at, l);
    }
    if rng.random_bool(0.03) {
        let at = rng.random_range(1..=words.len());
        words.insert(at, format!("#{}", pick(rng, TAGS)));
    }
    let mut s = words.join(" ");
    if let Some(first) = s.get(..1) {
        s = format!("{}{}", first.to_uppercase(), &s[1..]);
    }
    s.push(if rng.random_bool(0.1) { '?' } else { '.' });
    s
}

fn code_block(rng: &mut ChaCha8Rng) -> String {
    let lang = *["rust", "bash", "python", "sql", "json"].choose(rng).unwrap();
    let mut s = format!("```{lang}\n");
    for _ in 0..rng.random_range(3..=8) {
        let line = match lang {
            "rust" => format!("let {} = {}(&{});", pick(rng, NOUNS), pick(rng, VERBS), pick(rng, NOUNS)),
            "bash" => format!("{} --{} {}", pick(rng, VERBS), pick(rng, NOUNS), pick(rng, NOUNS)),
            "python" => format!("{} = {}({})", pick(rng, NOUNS), pick(rng, VERBS), pick(rng, NOUNS)),
            "sql" => format!(
                "SELECT {} FROM {} WHERE id = {};",
                pick(rng, NOUNS),
                pick(rng, NOUNS),
                rng.random_range(1..999)
            ),
            _ => format!("\"{}\": \"{}\",", pick(rng, NOUNS), pick(rng, ADJECTIVES)),
        };
        s.push_str(&line);
        s.push('\n');
    }
    s.push_str("```\n");
    s
}

fn title(rng: &mut ChaCha8Rng) -> String {
    let n = rng.random_range(2..=4);
    let mut words = vec![cap(pick(rng, ADJECTIVES))];
    for _ in 1..n {
        words.push(cap(pick(rng, NOUNS)));
    }
    words.join(" ")
}

fn heading(rng: &mut ChaCha8Rng) -> String {
    match rng.random_range(0..4) {
        0 => format!("{} {}", cap(pick(rng, VERBS)), pick(rng, NOUNS)),
        1 => format!("{} and {}", cap(pick(rng, NOUNS)), pick(rng, NOUNS)),
        2 => format!("{} {}", cap(pick(rng, ADJECTIVES)), pick(rng, NOUNS)),
        _ => cap(pick(rng, NOUNS)),
    }
}

fn pick<'a>(rng: &mut ChaCha8Rng, list: &[&'a str]) -> &'a str {
    list.choose(rng).copied().unwrap()
}

fn cap(w: &str) -> String {
    let mut c = w.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

/// A small word of the prose ("the", "before", …): what a search query built from the
/// corpus leaves out when it wants words that tell pages apart.
pub fn is_filler(word: &str) -> bool {
    SMALL.contains(&word)
}

pub fn slugify(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars().flat_map(char::to_lowercase) {
        if c.is_ascii_alphanumeric() {
            out.push(c);
        } else if !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
    }
    out.trim_end_matches('-').to_owned()
}

#[rustfmt::skip]
const SMALL: &[&str] = &[
    "the", "a", "of", "to", "and", "in", "for", "with", "on", "by", "from", "as", "that", "this", "it", "we", "our",
    "each", "every", "most", "some", "when", "then", "before", "after", "while", "because", "so", "not", "only",
];

#[rustfmt::skip]
const ADJECTIVES: &[&str] = &[
    "quarterly", "internal", "shared", "recent", "annual", "initial", "final", "simple", "complex", "quick",
    "careful", "detailed", "public", "private", "remote", "local", "early", "late", "stable", "new", "old", "main",
    "minor", "major", "weekly", "daily", "common", "rare", "small", "large", "open", "closed", "clear", "useful",
    "formal", "informal", "current", "previous", "next", "secure", "slow", "fast", "manual", "automatic",
    "regional", "global", "technical", "practical", "typical", "critical", "optional", "standard", "legacy",
    "modern", "draft", "official",
];

#[rustfmt::skip]
const NOUNS: &[&str] = &[
    "budget", "review", "meeting", "project", "release", "roadmap", "team", "customer", "server", "database",
    "backup", "policy", "process", "document", "report", "design", "system", "service", "network", "account",
    "invoice", "contract", "schedule", "deadline", "milestone", "feature", "request", "issue", "ticket", "incident",
    "deployment", "migration", "index", "search", "query", "page", "note", "draft", "template", "workflow",
    "pipeline", "cluster", "node", "volume", "snapshot", "archive", "policy", "guideline", "checklist", "handbook",
    "onboarding", "training", "vendor", "supplier", "office", "hardware", "laptop", "printer", "license", "audit",
    "risk", "goal", "metric", "dashboard", "alert", "log", "error", "retry", "timeout", "cache", "queue", "worker",
    "garden", "kitchen", "recipe", "journey", "trip", "library", "museum", "river", "mountain", "forest", "harbor",
];

#[rustfmt::skip]
const VERBS: &[&str] = &[
    "update", "review", "schedule", "deploy", "measure", "improve", "document", "approve", "track", "migrate",
    "archive", "restore", "check", "monitor", "plan", "estimate", "discuss", "share", "publish", "prepare",
    "replace", "configure", "install", "remove", "rotate", "verify", "compare", "collect", "summarize", "organize",
    "simplify", "support", "extend", "reduce", "increase", "follow", "assign", "close", "open", "merge", "split",
    "test",
];

#[rustfmt::skip]
const TAGS: &[&str] = &[
    "meeting", "howto", "reference", "draft", "ops", "finance", "hr", "design", "roadmap", "incident", "todo",
    "archive", "research", "travel", "recipes", "reading", "ideas", "infra", "security", "onboarding",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic_prefix_and_shape() {
        let a = generate(42, 300);
        let b = generate(42, 100);
        for (x, y) in a.iter().zip(&b) {
            assert_eq!(x.slug, y.slug);
            assert_eq!(x.content, y.content);
        }
        let top = a.iter().filter(|p| p.parent.is_none()).count();
        assert!(top > 10 && top < 60, "top-level {top}");
        for (i, p) in a.iter().enumerate() {
            assert!((1800..=5300).contains(&p.content.len()), "page {i} is {} bytes", p.content.len());
            assert!(p.depth <= MAX_DEPTH);
            if let Some(par) = p.parent {
                assert!(par < i);
                assert_eq!(a[par].depth + 1, p.depth);
            }
            let links = p.content.matches("[[").count();
            assert!((3..=8).contains(&links), "page {i} has {links} links");
            assert!(p.content.starts_with("# "));
            assert!(p.content.contains("\n## "));
            assert!(p.content.contains("Tags: #"));
        }
    }

    #[test]
    fn edits_stay_similar() {
        let pages = generate(7, 5);
        let mut rng = rng_for(7, "edit", 0);
        let mut c = pages[0].content.clone();
        for _ in 0..49 {
            let next = edit(&mut rng, &c);
            assert_ne!(next, c);
            c = next;
        }
        assert!(c.len() < 8000, "grew to {}", c.len());
    }
}
