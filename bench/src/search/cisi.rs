//! The CISI test collection (/work/shared/relevance/README.md): 1,460 abstracts, 112
//! queries, binary relevance judgments for 76 of them. Read in place, never copied.
//!
//! The files are in the SMART format: a record starts with `.I id`, and a line holding
//! only `.T`, `.A`, `.W`, `.X`, … starts a field that runs to the next such line. The
//! bytes are Latin-1, so each byte is one char.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;

use anyhow::{Context, Result, bail};

pub struct Doc {
    pub id: u32,
    pub title: String,
    pub abstract_: String,
}

pub struct Query {
    pub id: u32,
    /// The `.T` field (26 of the judged queries have one: they are papers' abstracts).
    pub title: String,
    /// The `.W` field.
    pub text: String,
}

pub struct Collection {
    pub docs: Vec<Doc>,
    /// The judged queries only (those with at least one relevant document), by id.
    pub queries: Vec<Query>,
    pub relevant: HashMap<u32, HashSet<u32>>,
    /// Queries in CISI.QRY, judged or not.
    pub queries_in_file: usize,
}

impl Query {
    /// What is sent as `q`: the title, when the query has one, then the text.
    pub fn full(&self) -> String {
        if self.title.is_empty() { self.text.clone() } else { format!("{} {}", self.title, self.text) }
    }
}

impl Doc {
    /// The page content: title and abstract, as the reference BM25 reads them (authors
    /// and references are left out).
    pub fn content(&self) -> String {
        format!("# {}\n\n{}\n", self.title, self.abstract_)
    }

    pub fn slug(&self) -> String {
        slug(self.id)
    }
}

pub fn slug(id: u32) -> String {
    format!("cisi-{id}")
}

/// The document id of a page slug `cisi-<id>`.
pub fn doc_id(slug: &str) -> Option<u32> {
    slug.strip_prefix("cisi-")?.parse().ok()
}

pub fn load(dir: &Path) -> Result<Collection> {
    let read = |name: &str| -> Result<String> {
        let bytes = std::fs::read(dir.join(name)).with_context(|| format!("reading {}", dir.join(name).display()))?;
        Ok(bytes.iter().map(|&b| char::from(b)).collect())
    };
    let docs: Vec<Doc> = records(&read("CISI.ALL")?)
        .into_iter()
        .map(|(id, f)| Doc { id, title: field(&f, 'T'), abstract_: field(&f, 'W') })
        .collect();
    let all_queries: Vec<Query> = records(&read("CISI.QRY")?)
        .into_iter()
        .map(|(id, f)| Query { id, title: field(&f, 'T'), text: field(&f, 'W') })
        .collect();
    let mut relevant: HashMap<u32, HashSet<u32>> = HashMap::new();
    for (n, line) in read("CISI.REL")?.lines().enumerate() {
        let mut cols = line.split_whitespace();
        let (Some(q), Some(d)) = (cols.next(), cols.next()) else { continue };
        let parse = |s: &str| s.parse::<u32>().with_context(|| format!("CISI.REL line {}: {line:?}", n + 1));
        relevant.entry(parse(q)?).or_default().insert(parse(d)?);
    }
    let ids: HashSet<u32> = docs.iter().map(|d| d.id).collect();
    if let Some(d) = relevant.values().flatten().find(|d| !ids.contains(d)) {
        bail!("CISI.REL judges document {d}, which CISI.ALL does not hold");
    }
    let queries_in_file = all_queries.len();
    let queries: Vec<Query> = all_queries.into_iter().filter(|q| relevant.contains_key(&q.id)).collect();
    if docs.is_empty() || queries.is_empty() {
        bail!("no documents or no judged queries in {}", dir.display());
    }
    Ok(Collection { docs, queries, relevant, queries_in_file })
}

/// Words no title query is made of.
const STOP: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "has", "have", "how", "in", "is", "it", "its",
    "of", "on", "or", "that", "the", "this", "to", "was", "were", "what", "which", "who", "why", "with",
];

impl Collection {
    /// Short known-item queries over the same documents, the searches people type to find
    /// a page they know: for every tenth document, the first three words of its title (of
    /// letters, longer than two, no stop word; titles with fewer than two such words are
    /// left out), with that document as the one right answer. The judged queries are
    /// paragraphs; these say whether the right page comes first for a few words.
    pub fn known_items(&self) -> Collection {
        let mut queries = Vec::new();
        let mut relevant = HashMap::new();
        for d in self.docs.iter().filter(|d| d.id % 10 == 0) {
            let words: Vec<String> = d
                .title
                .split(|c: char| !c.is_ascii_alphabetic())
                .filter(|w| w.len() > 2 && !STOP.contains(&w.to_lowercase().as_str()))
                .take(3)
                .map(str::to_lowercase)
                .collect();
            if words.len() >= 2 {
                queries.push(Query { id: d.id, title: String::new(), text: words.join(" ") });
                relevant.insert(d.id, HashSet::from([d.id]));
            }
        }
        let queries_in_file = queries.len();
        Collection { docs: Vec::new(), queries, relevant, queries_in_file }
    }
}

/// Each field's text with runs of white space (line breaks included) made one space;
/// a field given twice (several `.A` lines) is joined.
fn field(f: &BTreeMap<char, String>, name: char) -> String {
    f.get(&name).map(|s| s.split_whitespace().collect::<Vec<_>>().join(" ")).unwrap_or_default()
}

/// The records of a SMART file, in file order: id and fields by letter.
fn records(text: &str) -> Vec<(u32, BTreeMap<char, String>)> {
    let mut out: Vec<(u32, BTreeMap<char, String>)> = Vec::new();
    let mut current: Option<char> = None;
    for line in text.lines() {
        if let Some(id) = line.strip_prefix(".I ").and_then(|r| r.trim().parse().ok()) {
            out.push((id, BTreeMap::new()));
            current = None;
            continue;
        }
        if let Some(name) = marker(line) {
            current = Some(name);
            continue;
        }
        if let (Some(name), Some((_, fields))) = (current, out.last_mut()) {
            let f = fields.entry(name).or_default();
            f.push_str(line);
            f.push('\n');
        }
    }
    out
}

/// `.T`, `.W`, … alone on a line (trailing spaces allowed). Text lines never look like
/// that: an abstract line starting with a dot has a digit or more words after it.
fn marker(line: &str) -> Option<char> {
    let mut c = line.trim_end().chars();
    match (c.next(), c.next(), c.next()) {
        (Some('.'), Some(name), None) if name.is_ascii_uppercase() => Some(name),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn smart_records() {
        let text = ".I 1\n.T\nA Title\non two lines\n.A\nSmith, J.\n.A \nDoe, K.\n.W\n   Some text\n.5 percent\n.X\n1\t2\t3\n.I 2\n.W\nOnly text\n";
        let r = records(text);
        assert_eq!(r.len(), 2);
        assert_eq!(field(&r[0].1, 'T'), "A Title on two lines");
        assert_eq!(field(&r[0].1, 'A'), "Smith, J. Doe, K.");
        assert_eq!(field(&r[0].1, 'W'), "Some text .5 percent");
        assert_eq!(r[1].0, 2);
        assert_eq!(field(&r[1].1, 'T'), "");
        assert_eq!(doc_id("cisi-17"), Some(17));
        assert_eq!(doc_id("other-17"), None);
    }

    #[test]
    fn known_items_are_title_words() {
        let doc = |id, title: &str| Doc { id, title: title.into(), abstract_: String::new() };
        let col = Collection {
            docs: vec![
                doc(10, "The Design of Library Automation Systems"),
                doc(20, "On It"),
                doc(21, "Skipped Title Here"),
            ],
            queries: vec![],
            relevant: HashMap::new(),
            queries_in_file: 0,
        };
        let known = col.known_items();
        assert_eq!(known.queries.len(), 1);
        assert_eq!((known.queries[0].id, known.queries[0].full()), (10, "design library automation".to_owned()));
        assert_eq!(known.relevant[&10], HashSet::from([10]));
    }
}
