//! The markdown rules the web app implements too (slugs of titles, heading anchors, the
//! title and tags of front matter, wikilinks), checked against the cases both test suites
//! read: tests/fixtures/markdown.json (the app's side is web/src/markdown/fixtures.test.ts).
//! The expected values are this crate's answers; a case the app does not read the same way
//! yet carries `ts_differs`, which only the app's test reads.

use cairn::testing::ids::Slug;
use cairn::testing::markdown::{self, LinkKind};
use serde::Deserialize;

#[derive(Deserialize)]
struct Fixtures {
    slugs: Vec<SlugCase>,
    headings: Vec<HeadingsCase>,
    front_matter: Vec<FrontMatterCase>,
    wikilinks: Vec<WikilinksCase>,
}

#[derive(Deserialize)]
struct SlugCase {
    title: String,
    slug: String,
}

#[derive(Deserialize)]
struct HeadingsCase {
    markdown: String,
    headings: Vec<HeadingCase>,
}

#[derive(Deserialize)]
struct HeadingCase {
    level: u8,
    text: String,
    anchor: String,
}

#[derive(Deserialize)]
struct FrontMatterCase {
    markdown: String,
    title: Option<String>,
    tags: Vec<String>,
}

#[derive(Deserialize)]
struct WikilinksCase {
    markdown: String,
    links: Vec<LinkCase>,
}

/// A link's `heading` (the part after `#`) is the app's alone: the server keeps none.
#[derive(Deserialize)]
struct LinkCase {
    source: String,
    target: String,
    slug: String,
    label: Option<String>,
}

fn fixtures() -> Fixtures {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/markdown.json");
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn titles_derive_their_slugs() {
    for case in fixtures().slugs {
        assert_eq!(Slug::derive(&case.title), case.slug, "{:?}", case.title);
    }
}

#[test]
fn headings_get_their_anchors() {
    for case in fixtures().headings {
        let got: Vec<_> =
            markdown::parse(&case.markdown).headings.into_iter().map(|h| (h.level, h.text, h.anchor)).collect();
        let want: Vec<_> = case.headings.into_iter().map(|h| (h.level, h.text, h.anchor)).collect();
        assert_eq!(got, want, "{:?}", case.markdown);
    }
}

#[test]
fn front_matter_gives_title_and_tags() {
    for case in fixtures().front_matter {
        let parsed = markdown::parse(&case.markdown);
        assert_eq!(parsed.front_title, case.title, "title of {:?}", case.markdown);
        assert_eq!(parsed.tags, case.tags, "tags of {:?}", case.markdown);
    }
}

#[test]
fn wikilinks_name_their_pages() {
    for case in fixtures().wikilinks {
        let md = case.markdown.as_str();
        let got: Vec<_> = markdown::parse(md).links.into_iter().map(|l| (l.target, l.slug, l.label)).collect();
        let want: Vec<_> = case.links.iter().map(|l| (l.target.clone(), l.slug.clone(), l.label.clone())).collect();
        assert_eq!(got, want, "{md:?}");
        // Each link is where the case says it is written.
        let written: Vec<&str> = markdown::link_spans(md)
            .into_iter()
            .filter(|s| matches!(s.kind, LinkKind::Wiki | LinkKind::WikiEmbed))
            .map(|s| &md[s.whole])
            .collect();
        for link in &case.links {
            assert!(written.contains(&link.source.as_str()), "{md:?}: {:?} is not among {written:?}", link.source);
        }
    }
}
