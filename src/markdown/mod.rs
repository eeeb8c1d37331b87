//! What Cairn reads out of a page's raw markdown, computed once per save: the front
//! matter (`title:`, `tags:`), the first level-1 heading, inline `#tags`, `[[wikilinks]]`,
//! the headings with their anchors, the plain text that full-text search indexes and the
//! sentences extractive summaries choose from — plus the one edit Cairn ever makes to
//! markdown: pointing wikilinks at a renamed page ([`rewrite_links`]).
//!
//! It does not render HTML (Cairn stores markdown and renders nothing), does not resolve
//! links against existing pages (a slug with no page is a broken link; the caller decides),
//! and does not choose a page's title (the caller weighs the request, [`Parsed::front_title`],
//! [`Parsed::h1`], the previous title and the slug).
//!
//! # One parse, one rule for "outside code"
//!
//! The body goes through pulldown-cmark once. Whatever the parser puts in a code span, a
//! code block or raw HTML is code, so `links`, `tags`, `headings` and `sentences` never
//! see it, and [`rewrite_links`] uses the same parser, so it rewrites exactly the links
//! that [`parse`] reports.

use std::collections::{HashMap, HashSet};
use std::ops::Range;

use pulldown_cmark::{Event, HeadingLevel, LinkType, Options, Parser, Tag, TagEnd};
use yaml_rust2::{Yaml, YamlLoader};

use crate::ids::{Slug, page_tag};

/// Everything [`parse`] reads out of one page.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Parsed {
    /// `title:` from YAML front matter, trimmed, if a non-empty string (a number counts,
    /// `title: 2024`).
    pub front_title: Option<String>,
    /// Text of the first level-1 heading outside code (ATX `# x` or setext `x\n===`), inline
    /// markup flattened to text, trimmed; None if empty. An empty `#` is passed over in
    /// favour of a later level-1 heading.
    pub h1: Option<String>,
    /// Tags: front matter `tags:` (a YAML list, or a single comma/space separated string)
    /// plus inline `#tag` words outside code. Lower-cased, leading '#' stripped,
    /// de-duplicated, sorted.
    pub tags: Vec<String>,
    /// Wikilinks outside code, in document order, de-duplicated by `slug` (first occurrence
    /// kept). Embeds (`![[file.png]]`) and links into the page itself (`[[#section]]`) are
    /// not among them.
    pub links: Vec<WikiLink>,
    /// All headings (levels 1-6) outside code, in order.
    pub headings: Vec<Heading>,
    /// Plain text for full-text search: all text outside front matter incl. code, inline
    /// markup removed, wikilink labels (or targets) included, blocks separated by newlines.
    /// HTML contributes its text without the tags and comments.
    pub text: String,
    /// Sentences of the prose (paragraphs and list items, not headings, not code), verbatim
    /// text with inline markup flattened, split on sentence ends (. ! ? 。！？ followed by
    /// whitespace or end), trimmed, empty ones dropped, in document order.
    ///
    /// A CJK end (。！？) ends a sentence whatever follows, since such text puts no space
    /// after it; closing quotes and brackets stay with the sentence they close. Line breaks
    /// inside a paragraph become spaces.
    pub sentences: Vec<String>,
}

/// One `[[target]]`, `[[target|label]]` or `[[target#section]]` link.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WikiLink {
    /// Raw text before `|` (and before any `#anchor`), trimmed.
    pub target: String,
    /// The page it points to: `target` itself when that is a valid slug, else `Slug::derive(target)`.
    pub slug: String,
    /// Text after `|`, inline markup flattened, trimmed, if non-empty.
    pub label: Option<String>,
}

/// One heading, for a page's table of contents.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Heading {
    /// 1 to 6.
    pub level: u8,
    /// Inline markup flattened to text, trimmed.
    pub text: String,
    /// `Slug::derive(text)` (or the heading's explicit `{#id}`, or `section` when that is
    /// empty), made unique within the document by appending `-1`, `-2` … for repeats.
    pub anchor: String,
}

/// The markdown Cairn understands.
///
/// `ENABLE_YAML_STYLE_METADATA_BLOCKS` is deliberately left out: pulldown-cmark 0.13 accepts
/// such a block at the start of *any* block, so a passage framed by two `---` rules in the
/// middle of a page would silently vanish from text, headings and tags. Front matter is
/// split off by [`split_front_matter`] first, and only the body is parsed.
const OPTIONS: Options = Options::ENABLE_WIKILINKS
    .union(Options::ENABLE_TABLES)
    .union(Options::ENABLE_STRIKETHROUGH)
    .union(Options::ENABLE_TASKLISTS)
    .union(Options::ENABLE_HEADING_ATTRIBUTES);

/// Stands in the tag-scanning buffer for text that can hold no tag (code spans, wikilinks,
/// link URLs, image descriptions, inline HTML): it is neither whitespace nor a tag
/// character, so it neither starts nor continues a tag.
const MASK: char = '\0';

/// The anchor of a heading whose text yields no slug (`# !!!`, an image alone).
const EMPTY_ANCHOR: &str = "section";

/// Reads a page: front matter, title candidates, tags, wikilinks, headings, text, sentences.
pub fn parse(markdown: &str) -> Parsed {
    let (front, body) = split_front_matter(markdown);
    let body = obsidian_plain(strip_bom(body));
    let body = body.as_ref();
    let mut walker = Walker::new(body);
    for (event, range) in Parser::new_ext(body, OPTIONS).into_offset_iter() {
        walker.event(event, range);
    }
    let mut parsed = walker.finish();
    if let Some(yaml) = front {
        apply_front_matter(yaml, &mut parsed);
    }
    parsed.tags.sort_unstable();
    parsed.tags.dedup();
    parsed
}

/// The body without the marks of Obsidian's syntax that are not text: a callout's
/// `[!type]` (and its fold sign) at the start of a quote, a block id (` ^id`) ending a
/// line, and `==` around highlighted text — so the plain text, the sentences summaries
/// are made of and the snippets read as the web app shows the page. Fenced code and
/// inline code are left as they are. Borrowed when there is nothing to take out.
fn obsidian_plain(body: &str) -> std::borrow::Cow<'_, str> {
    if !(body.contains("[!") || body.contains("==") || body.contains(" ^")) {
        return std::borrow::Cow::Borrowed(body);
    }
    let mut out = String::with_capacity(body.len());
    let mut fence: Option<&str> = None;
    for line in body.split_inclusive('\n') {
        let trimmed = line.trim_start();
        if let Some(open) = fence {
            if trimmed.starts_with(open) {
                fence = None;
            }
            out.push_str(line);
            continue;
        }
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            fence = Some(&trimmed[..3]);
            out.push_str(line);
            continue;
        }
        let (content, end) = match line.strip_suffix('\n') {
            Some(c) => (c.strip_suffix('\r').unwrap_or(c), &line[c.strip_suffix('\r').unwrap_or(c).len()..]),
            None => (line, ""),
        };
        if let Some((quote, title)) = callout_title(content) {
            // The title, a paragraph of its own (as the app shows it), before the body.
            out.push_str(quote);
            out.push_str(&without_highlight_marks(without_block_id(title)));
            out.push('\n');
            out.push_str(quote.trim_end());
            out.push_str(if end.is_empty() { "" } else { "\n" });
            continue;
        }
        out.push_str(&without_highlight_marks(without_block_id(content)));
        out.push_str(end);
    }
    std::borrow::Cow::Owned(out)
}

/// A callout's first line, `> [!warning]- Title`: its quote marks (`> `) and its title.
fn callout_title(line: &str) -> Option<(&str, &str)> {
    let quotes = line.len() - line.trim_start_matches(['>', ' ', '\t']).len();
    if !line[..quotes].contains('>') {
        return None;
    }
    let after = line[quotes..].strip_prefix("[!")?;
    let close = after.find(']')?;
    let kind = &after[..close];
    if kind.is_empty() || !kind.chars().all(|c| c.is_alphanumeric() || c == '-' || c == '_') {
        return None;
    }
    Some((&line[..quotes], after[close + 1..].trim_start_matches(['+', '-']).trim_start()))
}

/// `Some text ^block-1` → `Some text`.
fn without_block_id(line: &str) -> &str {
    let trimmed = line.trim_end();
    match trimmed.rfind(" ^") {
        Some(at)
            if at + 2 < trimmed.len() && trimmed[at + 2..].chars().all(|c| c.is_ascii_alphanumeric() || c == '-') =>
        {
            trimmed[..at].trim_end()
        }
        _ if trimmed.starts_with('^') && trimmed[1..].chars().all(|c| c.is_ascii_alphanumeric() || c == '-') => "",
        _ => line,
    }
}

/// `==text==` → `text`, outside inline code.
fn without_highlight_marks(line: &str) -> std::borrow::Cow<'_, str> {
    if !line.contains("==") {
        return line.into();
    }
    let mut out = String::with_capacity(line.len());
    let mut in_code = false;
    let mut rest = line;
    while let Some(c) = rest.chars().next() {
        if c == '`' {
            in_code = !in_code;
        } else if !in_code && rest.starts_with("==") {
            // A pair on this line, with text between: both marks go.
            if let Some(end) = rest[2..].find("==").filter(|&n| n > 0 && !rest[2..2 + n].contains('`')) {
                out.push_str(&rest[2..2 + end]);
                rest = &rest[4 + end..];
                continue;
            }
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out.into()
}

/// Rewrites every wikilink outside code whose resolved slug is `old` so that it points to
/// `new`, keeping the text readers saw: `[[old]]` → `[[new]]`, `[[old|label]]` →
/// `[[new|label]]`, `[[old#sec]]` → `[[new#sec]]`, and a link written as a title,
/// `[[Old Title]]` (which derives to `old`), → `[[new|Old Title]]` (`[[Old Title#sec]]` →
/// `[[new#sec|Old Title]]`; in a table the added pipe is written `\|`). Everything else
/// stays byte-identical (front matter, code blocks, inline code, whitespace, other links).
/// Returns None when nothing changed.
///
/// Only the target is replaced, and a label added where the link had none and its target
/// was not the slug itself: the whitespace around the target, the `#section`, the `|` and
/// an existing label are kept as written. A note embed (`![[old]]`, `![[Old Title#sec]]`)
/// is a link too and points to `new` afterwards, without a label; a file's embed
/// (`![[old.png]]`) is not.
pub(crate) fn rewrite_links(markdown: &str, old: &str, new: &str) -> Option<String> {
    if old == new || !markdown.contains("[[") {
        return None;
    }
    let edits: Vec<_> = link_spans(markdown)
        .into_iter()
        .filter(|l| match l.kind {
            LinkKind::Wiki => resolve(&markdown[l.target.clone()]) == old,
            LinkKind::WikiEmbed => {
                let target = &markdown[l.target.clone()];
                resolve(target) == old && !is_attachment(target)
            }
            LinkKind::Inline | LinkKind::InlineImage => false,
        })
        .flat_map(|l| relink(markdown, &l, new))
        .collect();
    if edits.is_empty() {
        return None;
    }
    let out = apply_edits(markdown, edits);
    // A target written with markdown's own characters (a backtick that pairs with one
    // further on) can change how the text around it parses once it is replaced. Such a
    // rewrite is not made, rather than make the page lose or gain other links.
    let others = |text: &str| parse(text).links.into_iter().filter(|l| l.slug != old && l.slug != new).map(|l| l.slug);
    (out != markdown && others(markdown).eq(others(&out))).then_some(out)
}

/// The edits that point wikilink `link` of `markdown` at the page `slug`, keeping the text
/// readers saw: the target replaced (its whitespace, `#section`, `|` and label kept as
/// written), and a link written as a title rather than a slug, which loses its words to
/// the slug, labelled with what the app showed for it: `[[Old Title#Setup]]` →
/// `[[slug#Setup|Old Title › Setup]]` (CONTRACT §5). A label that is exactly what such a
/// rewrite added for a title of `slug` goes back to that title: renaming a page away and
/// back leaves `[[Glossary]]` as it was, not `[[glossary|Glossary]]`. An embed shows the
/// page itself, titled: it gets no label.
pub(crate) fn relink(markdown: &str, link: &LinkSpan, slug: &str) -> Vec<(Range<usize>, String)> {
    let target = &markdown[link.target.clone()];
    if link.kind == LinkKind::Wiki
        && let Some(title_form) = title_form_of_label(markdown, link, slug)
    {
        return vec![title_form];
    }
    let mut edits = vec![(link.target.clone(), slug.to_owned())];
    if let (LinkKind::Wiki, Some(close)) = (link.kind, link.unlabelled_close)
        && resolve(target) != target
    {
        let pipe = if link.in_table { "\\|" } else { "|" };
        let section = section_words(&markdown[link.target.end..close]);
        let label = match section {
            Some(section) => format!("{} › {section}", words(target)),
            None => words(target),
        };
        edits.push((close..close, format!("{pipe}{label}")));
    }
    edits
}

/// `text` with its runs of whitespace made one space, trimmed.
fn words(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The words of a wikilink's `#section` part (the text between its target and its `|` or
/// `]]`), if it has one.
fn section_words(between: &str) -> Option<String> {
    between.trim().strip_prefix('#').map(words).filter(|s| !s.is_empty())
}

/// For a labelled wikilink `[[target#section|label]]` whose label is a title of `slug`
/// (with ` › section` when the link has that section), the edit that writes it back as
/// that title: `[[Title#section]]`.
fn title_form_of_label(markdown: &str, link: &LinkSpan, slug: &str) -> Option<(Range<usize>, String)> {
    if link.unlabelled_close.is_some() || markdown.get(link.whole.end.checked_sub(2)?..link.whole.end)? != "]]" {
        return None;
    }
    let inner = link.whole.start + 2..link.whole.end - 2;
    let pipe = link.target.end + markdown.get(link.target.end..inner.end)?.find('|')?;
    let section_text = markdown[link.target.end..pipe].trim_end_matches('\\');
    let section = section_words(section_text);
    let label = words(&markdown[pipe + 1..inner.end]);
    let title = match &section {
        Some(s) => label.strip_suffix(&format!(" › {s}"))?.to_owned(),
        None => label,
    };
    if title.is_empty() || title == slug || resolve(&title) != slug || title.contains(['#', '|', '[', ']']) {
        return None;
    }
    let written = match section {
        Some(s) => format!("{title}#{s}"),
        None => title,
    };
    Some((inner, written))
}

/// `text` with each edit (a byte range and its replacement) applied, in order of where
/// they start; an edit overlapping an earlier one is dropped.
pub(crate) fn apply_edits(text: &str, mut edits: Vec<(Range<usize>, String)>) -> String {
    if edits.is_empty() {
        return text.to_owned();
    }
    edits.sort_by_key(|(r, _)| r.start);
    let mut out = String::with_capacity(text.len() + 64);
    let mut at = 0;
    for (range, with) in edits {
        if range.start < at {
            continue;
        }
        out.push_str(&text[at..range.start]);
        out.push_str(&with);
        at = range.end;
    }
    out.push_str(&text[at..]);
    out
}

/// Replaces the text of the page's first level-1 heading (the one [`Parsed::h1`] reads)
/// with `text`, when that heading reads `old` (a rename's new title replacing a heading
/// that equalled the old title). The heading's markers (`# `, a setext underline, a
/// closing `##`) and everything else stay as written. None when the first level-1
/// heading is not `old`, or its text cannot be placed in the source.
pub(crate) fn replace_h1(markdown: &str, old: &str, text: &str) -> Option<String> {
    if parse(markdown).h1.as_deref() != Some(old) || text.contains(['\n', '\r']) {
        return None;
    }
    let (_, body) = split_front_matter(markdown);
    let body = strip_bom(body);
    let body_start = markdown.len() - body.len();
    let mut inner: Option<Range<usize>> = None;
    let mut in_h1 = false;
    for (event, range) in Parser::new_ext(body, OPTIONS).into_offset_iter() {
        match event {
            Event::Start(Tag::Heading { level: HeadingLevel::H1, .. }) => {
                in_h1 = true;
                inner = None;
            }
            Event::End(TagEnd::Heading(HeadingLevel::H1)) => {
                in_h1 = false;
                // The first heading with text is the one `h1` reads.
                if inner.as_ref().is_some_and(|r| !body[r.clone()].trim().is_empty()) {
                    break;
                }
                inner = None;
            }
            _ if in_h1 => {
                inner = Some(match inner {
                    Some(r) => r.start.min(range.start)..r.end.max(range.end),
                    None => range,
                });
            }
            _ => {}
        }
    }
    let inner = inner?;
    let out = format!("{}{text}{}", &markdown[..body_start + inner.start], &markdown[body_start + inner.end..]);
    // Only if the page now reads as intended (the heading held plain text).
    (parse(&out).h1.as_deref() == Some(text.trim())).then_some(out)
}

/// What kind of link a [`LinkSpan`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkKind {
    /// `[[target]]`, `[[target|label]]`, `[[target#section]]`.
    Wiki,
    /// `![[target]]` (Obsidian's embed).
    WikiEmbed,
    /// `[text](destination)`.
    Inline,
    /// `![alt](destination)`.
    InlineImage,
}

/// Where one link outside code lies in a page's markdown: byte ranges into the whole text
/// (front matter included), for tools that rewrite links (the importer). Found with the
/// same parse as [`parse`], so code spans and blocks never yield one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkSpan {
    pub kind: LinkKind,
    /// The whole link, `[[…]]` or `[…](…)` included.
    pub whole: Range<usize>,
    /// A wikilink's target (before `#`, trimmed) or an inline link's destination as written.
    pub target: Range<usize>,
    /// A wikilink without a label: where its closing `]]` starts, so that a label can be
    /// added before it.
    pub unlabelled_close: Option<usize>,
    /// Inside a table, where an added label's pipe is written `\|`.
    pub in_table: bool,
}

/// Every wikilink, embed, inline link and inline image outside code, in document order.
/// A link whose target cannot be placed in the source (an escaped destination) is left out.
pub fn link_spans(markdown: &str) -> Vec<LinkSpan> {
    let (_, body) = split_front_matter(markdown);
    let body = strip_bom(body);
    let offset = markdown.len() - body.len();
    let mut out = Vec::new();
    let mut tables = 0usize;
    for (event, range) in Parser::new_ext(body, OPTIONS).into_offset_iter() {
        let (image, link_type, dest) = match event {
            Event::Start(Tag::Table(_)) => {
                tables += 1;
                continue;
            }
            Event::End(TagEnd::Table) => {
                tables = tables.saturating_sub(1);
                continue;
            }
            Event::Start(Tag::Link { link_type, dest_url, .. }) => (false, link_type, dest_url),
            Event::Start(Tag::Image { link_type, dest_url, .. }) => (true, link_type, dest_url),
            _ => continue,
        };
        let mut unlabelled_close = None;
        let (kind, span) = match link_type {
            LinkType::WikiLink { has_pothole } => {
                if !has_pothole {
                    let close = range.end.checked_sub(2).filter(|c| body.get(*c..range.end) == Some("]]"));
                    unlabelled_close = close.map(|c| offset + c);
                }
                (
                    if image { LinkKind::WikiEmbed } else { LinkKind::Wiki },
                    target_span(body, range.clone(), &dest, has_pothole),
                )
            }
            LinkType::Inline => {
                let start = (dest.as_ptr() as usize).checked_sub(body.as_ptr() as usize);
                let span = start.filter(|s| range.start <= *s && s + dest.len() <= range.end && !dest.is_empty());
                let span = span.filter(|s| body.get(*s..s + dest.len()) == Some(&*dest)).map(|s| s..s + dest.len());
                (if image { LinkKind::InlineImage } else { LinkKind::Inline }, span)
            }
            _ => continue,
        };
        if let Some(t) = span {
            out.push(LinkSpan {
                kind,
                whole: offset + range.start..offset + range.end,
                target: offset + t.start..offset + t.end,
                unlabelled_close,
                in_table: tables > 0,
            });
        }
    }
    out
}

/// The front matter (the YAML block at the very start: a first line `---`, closed by a
/// line `---` or `...`) split from the body: (Some(yaml_text), body) or (None, whole input).
///
/// The fence lines may carry trailing spaces or tabs and end in `\n` or `\r\n`; a UTF-8
/// byte order mark before the opening fence is tolerated (and belongs to neither part).
/// The YAML text runs from the line after the opening fence up to the closing fence line
/// (it keeps its last line ending); the body starts on the line after the closing fence.
pub(crate) fn split_front_matter(markdown: &str) -> (Option<&str>, &str) {
    let text = strip_bom(markdown);
    let Some(first_end) = text.find('\n') else {
        return (None, markdown);
    };
    if !is_fence(&text[..first_end], false) {
        return (None, markdown);
    }
    let yaml_start = first_end + 1;
    let mut line_start = yaml_start;
    while line_start < text.len() {
        let line_end = text[line_start..].find('\n').map_or(text.len(), |i| line_start + i);
        if is_fence(&text[line_start..line_end], true) {
            let body_start = (line_end + 1).min(text.len());
            return (Some(&text[yaml_start..line_start]), &text[body_start..]);
        }
        line_start = line_end + 1;
    }
    (None, markdown)
}

/// Without a leading byte order mark, which would keep a first `# Title` from being a heading.
fn strip_bom(text: &str) -> &str {
    text.strip_prefix('\u{feff}').unwrap_or(text)
}

/// Whether one line (without its `\n`) is a front matter fence: `---`, or also `...` when
/// it closes the block, with nothing after it but spaces, tabs and a `\r`.
fn is_fence(line: &str, closing: bool) -> bool {
    let line = line.trim_end_matches([' ', '\t', '\r']);
    line == "---" || (closing && line == "...")
}

/// What an embed names when it shows a file rather than a note (Obsidian's attachment
/// kinds: images, audio, video, PDF).
const ATTACHMENT_EXTENSIONS: &[&str] = &[
    "png", "jpg", "jpeg", "gif", "webp", "avif", "svg", "bmp", "pdf", "mp3", "wav", "m4a", "ogg", "flac", "3gp", "mp4",
    "webm", "mov", "mkv", "ogv",
];

fn is_attachment(target: &str) -> bool {
    target.rsplit_once('.').is_some_and(|(_, ext)| ATTACHMENT_EXTENSIONS.contains(&ext.to_ascii_lowercase().as_str()))
}

/// The slug a wikilink target points to (what [`WikiLink::slug`] holds).
pub(crate) fn link_slug(target: &str) -> String {
    resolve(target)
}

/// The slug a wikilink target points to.
fn resolve(target: &str) -> String {
    if Slug::is_valid(target) { target.to_owned() } else { Slug::derive(target) }
}

/// The target of a wikilink from its raw destination (the text before `|`): cut at the
/// first `#`, trimmed. In a piped link a trailing `\` escaped the `|` (how a wikilink with
/// a label is written inside a table) and is not part of the target.
fn wikilink_target(dest: &str, has_pothole: bool) -> &str {
    let dest = if has_pothole { dest.strip_suffix('\\').unwrap_or(dest) } else { dest };
    dest.split('#').next().unwrap_or_default().trim()
}

/// Where, in `body`, the (trimmed) target of a wikilink lies, given its destination as the
/// parser reported it. The destination is a slice of the body (pulldown-cmark borrows it
/// from the source, after any backslash that escapes its first character), so its place is
/// read off the pointers rather than guessed from the link's first bytes; a destination
/// that is not a slice of `link` in the body yields None, and nothing is replaced.
fn target_span(body: &str, link: Range<usize>, dest: &str, has_pothole: bool) -> Option<Range<usize>> {
    let target = wikilink_target(dest, has_pothole);
    if target.is_empty() {
        return None;
    }
    let start = (target.as_ptr() as usize).checked_sub(body.as_ptr() as usize)?;
    let span = start..start.checked_add(target.len())?;
    let in_link = link.start <= span.start && span.end <= link.end;
    (in_link && body.get(span.clone())?.as_ptr() == target.as_ptr()).then_some(span)
}

/// Title and tags from the front matter. YAML that does not parse, or is not a mapping,
/// contributes nothing.
fn apply_front_matter(yaml: &str, parsed: &mut Parsed) {
    let Ok(docs) = YamlLoader::load_from_str(yaml) else {
        return;
    };
    let Some(doc) = docs.first() else {
        return;
    };
    if let Some(title) = scalar_text(&doc["title"]) {
        let title = title.trim();
        if !title.is_empty() {
            parsed.front_title = Some(title.to_owned());
        }
    }
    match &doc["tags"] {
        Yaml::Array(items) => {
            for item in items {
                if let Some(tag) = scalar_text(item) {
                    push_front_tag(&tag, &mut parsed.tags);
                }
            }
        }
        other => {
            if let Some(list) = scalar_text(other) {
                for tag in list.split(|c: char| c == ',' || c.is_whitespace()) {
                    push_front_tag(tag, &mut parsed.tags);
                }
            }
        }
    }
}

/// A YAML scalar as text: strings, and numbers as written (`title: 2024`).
fn scalar_text(value: &Yaml) -> Option<String> {
    match value {
        Yaml::String(s) | Yaml::Real(s) => Some(s.clone()),
        Yaml::Integer(i) => Some(i.to_string()),
        _ => None,
    }
}

fn push_front_tag(raw: &str, tags: &mut Vec<String>) {
    tags.extend(page_tag(raw));
}

/// The block an inline event belongs to, as far as this module cares.
enum Block {
    /// A paragraph or a list item: its text is prose, split into sentences.
    Prose,
    /// A heading; `id` is its explicit `{#id}`, if any; `marker` when its lines are a
    /// merge's conflict markers (never a title).
    Heading { level: u8, id: Option<String>, marker: bool },
    /// A code block: its text is searchable and nothing else.
    Code,
    /// Anything else (block quotes, lists, tables, cells, HTML blocks).
    Other,
}

/// The link an inline event sits in.
enum LinkCtx {
    /// A wikilink, recorded when it ends (its label is its text).
    Wiki(PendingLink),
    /// An autolink or e-mail link: its text is a URL or an address.
    Url,
    /// An ordinary `[text](url)` link: its text is ordinary text.
    Plain,
}

struct PendingLink {
    target: String,
    has_pothole: bool,
    label: String,
}

/// The state of the one pass over a body's events.
/// Whether the level-1 heading at `range` of `src` is made of a merge's conflict markers
/// (`<<<<<<<`, `|||||||`, `>>>>>>>` lines, or a `=======` underline inside a conflict),
/// which a save with markers left in would otherwise turn into the page's title:
/// `<<<<<<< Your edit\ntext\n=======` is a setext heading.
fn conflict_marker_heading(src: &str, range: Range<usize>) -> bool {
    let marker = |line: &str, c: char| {
        let rest = line.trim_end().strip_prefix(&c.to_string().repeat(7));
        rest.is_some_and(|r| r.is_empty() || r.starts_with(' '))
    };
    let heading = src.get(range.clone()).unwrap_or_default();
    if heading.lines().any(|l| marker(l, '<') || marker(l, '|') || marker(l, '>')) {
        return true;
    }
    // A `=======` underline is a marker when a conflict is open above it.
    let underline = heading.trim_end().lines().last().is_some_and(|l| l.trim_end() == "=======");
    underline && {
        let before = src.get(..range.start).unwrap_or_default();
        let open = before.lines().rev().find(|l| marker(l, '<') || marker(l, '>'));
        open.is_some_and(|l| marker(l, '<'))
    }
}

struct Walker<'a> {
    /// The body, to look at the source behind an event (escaped `\#`).
    src: &'a str,
    out: Parsed,
    blocks: Vec<Block>,
    links: Vec<LinkCtx>,
    /// How many links we are inside of whose text can hold no tag (wikilinks, autolinks).
    masked_links: usize,
    /// How many images we are inside of: their description is not prose.
    images: usize,
    /// The current block's text with inline markup flattened: a heading's text, or the
    /// prose to split into sentences.
    inline: String,
    /// The current block's text for finding `#tags`, [`MASK`] where no tag can be.
    tag_text: String,
    /// The raw HTML of the current HTML block; its text goes to `text` without the tags.
    html: String,
    link_slugs: HashSet<String>,
    anchors: HashSet<String>,
    /// For each anchor base already taken, the next suffix to try.
    anchor_suffix: HashMap<String, usize>,
}

impl<'a> Walker<'a> {
    fn new(src: &'a str) -> Self {
        Walker {
            src,
            out: Parsed { text: String::with_capacity(src.len()), ..Parsed::default() },
            blocks: Vec::new(),
            links: Vec::new(),
            masked_links: 0,
            images: 0,
            inline: String::new(),
            tag_text: String::new(),
            html: String::new(),
            link_slugs: HashSet::new(),
            anchors: HashSet::new(),
            anchor_suffix: HashMap::new(),
        }
    }

    fn event(&mut self, event: Event<'_>, range: Range<usize>) {
        match event {
            Event::Start(tag) => self.start(tag, range),
            Event::End(tag) => self.end(tag),
            Event::Text(text) => self.text(&text, range.start),
            Event::Code(code) => self.code(&code),
            Event::Html(html) => self.html.push_str(&html),
            Event::InlineHtml(_) => self.tag_text.push(MASK),
            Event::SoftBreak => self.line_break(' '),
            Event::HardBreak => self.line_break('\n'),
            Event::Rule => self.text_break(),
            Event::InlineMath(_) | Event::DisplayMath(_) | Event::FootnoteReference(_) | Event::TaskListMarker(_) => {}
        }
    }

    fn start(&mut self, tag: Tag<'_>, range: Range<usize>) {
        let block = match tag {
            Tag::Emphasis | Tag::Strong | Tag::Strikethrough | Tag::Superscript | Tag::Subscript => return,
            Tag::Link { link_type, dest_url, .. } => {
                let ctx = match link_type {
                    LinkType::WikiLink { has_pothole } => LinkCtx::Wiki(PendingLink {
                        target: wikilink_target(&dest_url, has_pothole).to_owned(),
                        has_pothole,
                        label: String::new(),
                    }),
                    LinkType::Autolink | LinkType::Email => LinkCtx::Url,
                    _ => LinkCtx::Plain,
                };
                if !matches!(ctx, LinkCtx::Plain) {
                    self.masked_links += 1;
                }
                self.links.push(ctx);
                return;
            }
            Tag::Image { link_type, dest_url, .. } => {
                // A note embed (`![[Note]]`, `![[Note#Section]]`) shows another page: a
                // link, as the web app renders it; a file's (`![[shot.png]]`) is not.
                if let LinkType::WikiLink { has_pothole } = link_type {
                    let target = wikilink_target(&dest_url, has_pothole);
                    if !is_attachment(target) {
                        let label = String::new();
                        self.record_link(PendingLink { target: target.to_owned(), has_pothole: false, label });
                    }
                }
                self.images += 1;
                return;
            }
            Tag::TableCell => {
                self.flush_block();
                if !self.out.text.is_empty() && !self.out.text.ends_with(char::is_whitespace) {
                    self.out.text.push(' ');
                }
                self.blocks.push(Block::Other);
                return;
            }
            Tag::Paragraph | Tag::Item => Block::Prose,
            Tag::Heading { level, id, .. } => Block::Heading {
                level: level as u8,
                id: id.map(|id| id.trim().to_owned()).filter(|id| !id.is_empty()),
                marker: level == HeadingLevel::H1 && conflict_marker_heading(self.src, range),
            },
            Tag::CodeBlock(_) | Tag::MetadataBlock(_) => Block::Code,
            _ => Block::Other,
        };
        self.flush_block();
        self.text_break();
        self.blocks.push(block);
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Emphasis | TagEnd::Strong | TagEnd::Strikethrough | TagEnd::Superscript | TagEnd::Subscript => {}
            TagEnd::Link => match self.links.pop() {
                Some(LinkCtx::Wiki(link)) => {
                    self.masked_links = self.masked_links.saturating_sub(1);
                    self.record_link(link);
                }
                Some(LinkCtx::Url) => self.masked_links = self.masked_links.saturating_sub(1),
                Some(LinkCtx::Plain) | None => {}
            },
            TagEnd::Image => self.images = self.images.saturating_sub(1),
            TagEnd::TableCell => {
                self.flush_block();
                self.blocks.pop();
            }
            _ => {
                if let Some(Block::Heading { level, id, marker }) = self.blocks.last_mut() {
                    let (level, id, marker) = (*level, id.take(), *marker);
                    self.record_heading(level, id, marker);
                }
                self.flush_block();
                self.blocks.pop();
                self.text_break();
            }
        }
    }

    fn text(&mut self, text: &str, src_start: usize) {
        self.out.text.push_str(text);
        if matches!(self.blocks.last(), Some(Block::Code)) {
            return;
        }
        if self.images > 0 {
            self.tag_text.push(MASK);
            return;
        }
        self.inline.push_str(text);
        if let Some(LinkCtx::Wiki(link)) = self.links.last_mut() {
            link.label.push_str(text);
        }
        if self.masked_links > 0 {
            self.tag_text.push(MASK);
        } else if let Some(rest) = text.strip_prefix('#')
            && src_start > 0
            && self.src.as_bytes().get(src_start - 1) == Some(&b'\\')
        {
            // `\#word` was escaped on purpose: not a tag.
            self.tag_text.push(MASK);
            self.tag_text.push_str(rest);
        } else {
            self.tag_text.push_str(text);
        }
    }

    fn code(&mut self, code: &str) {
        self.out.text.push_str(code);
        self.tag_text.push(MASK);
        if self.images > 0 {
            return;
        }
        self.inline.push_str(code);
        if let Some(LinkCtx::Wiki(link)) = self.links.last_mut() {
            link.label.push_str(code);
        }
    }

    /// A soft (`' '`) or hard (`'\n'`) line break inside a block; prose and labels get a
    /// space either way.
    fn line_break(&mut self, in_text: char) {
        self.out.text.push(in_text);
        self.tag_text.push(' ');
        if self.images > 0 {
            return;
        }
        self.inline.push(' ');
        if let Some(LinkCtx::Wiki(link)) = self.links.last_mut() {
            link.label.push(' ');
        }
    }

    /// Ends the current line of `text`, unless there is none.
    fn text_break(&mut self) {
        if !self.out.text.is_empty() && !self.out.text.ends_with('\n') {
            self.out.text.push('\n');
        }
    }

    /// Done with the inline content gathered so far: tags found, prose split into
    /// sentences, HTML reduced to its text.
    fn flush_block(&mut self) {
        scan_tags(&self.tag_text, &mut self.out.tags);
        self.tag_text.clear();
        if matches!(self.blocks.last(), Some(Block::Prose)) {
            split_sentences(&self.inline, &mut self.out.sentences);
        }
        self.inline.clear();
        if !self.html.is_empty() {
            self.text_break();
            push_html_text(&self.html, &mut self.out.text);
            self.html.clear();
        }
    }

    fn record_heading(&mut self, level: u8, id: Option<String>, marker: bool) {
        let text = self.inline.trim().to_owned();
        let mut base = id.unwrap_or_else(|| Slug::derive(&text));
        if base.is_empty() {
            base = EMPTY_ANCHOR.to_owned();
        }
        let anchor = self.unique_anchor(base);
        if level == 1 && self.out.h1.is_none() && !text.is_empty() && !marker {
            self.out.h1 = Some(text.clone());
        }
        self.out.headings.push(Heading { level, text, anchor });
    }

    fn unique_anchor(&mut self, base: String) -> String {
        if self.anchors.insert(base.clone()) {
            return base;
        }
        let next = self.anchor_suffix.entry(base.clone()).or_insert(1);
        loop {
            let candidate = format!("{base}-{next}");
            *next += 1;
            if self.anchors.insert(candidate.clone()) {
                return candidate;
            }
        }
    }

    fn record_link(&mut self, link: PendingLink) {
        let slug = resolve(&link.target);
        // `[[#section]]` points into this page, and `[[???]]` nowhere.
        if slug.is_empty() || !self.link_slugs.insert(slug.clone()) {
            return;
        }
        let label = link.label.trim();
        let label = (link.has_pothole && !label.is_empty()).then(|| label.to_owned());
        self.out.links.push(WikiLink { target: link.target, slug, label });
    }

    fn finish(mut self) -> Parsed {
        self.flush_block();
        let end = self.out.text.trim_end().len();
        self.out.text.truncate(end);
        self.out
    }
}

/// Whether `c` may be part of an inline tag.
fn is_tag_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '-' | '/')
}

/// Finds inline tags in one block's text: a `#` at the start of the block or after
/// whitespace or `(`, followed by tag characters of which at least one is a letter.
fn scan_tags(text: &str, tags: &mut Vec<String>) {
    if !text.contains('#') {
        return;
    }
    let mut prev: Option<char> = None;
    let mut i = 0;
    while let Some(c) = text[i..].chars().next() {
        if c == '#' && prev.is_none_or(|p| p.is_whitespace() || p == '(') {
            let rest = &text[i + 1..];
            let len = rest.find(|d: char| !is_tag_char(d)).unwrap_or(rest.len());
            if len > 0 {
                let word = &rest[..len];
                let tag = word.trim_end_matches(['-', '/']);
                if tag.chars().any(char::is_alphabetic) {
                    tags.extend(page_tag(tag));
                }
                prev = word.chars().next_back();
                i += 1 + len;
                continue;
            }
        }
        prev = Some(c);
        i += c.len_utf8();
    }
}

/// Ends a sentence whatever follows (CJK text puts no space after it).
fn is_cjk_sentence_end(c: char) -> bool {
    matches!(c, '。' | '！' | '？')
}

/// Ends a sentence when whitespace or the end of the text follows.
fn is_sentence_end(c: char) -> bool {
    matches!(c, '.' | '!' | '?') || is_cjk_sentence_end(c)
}

/// Closing quotes and brackets that belong to the sentence they follow: `(Like this.)`
fn is_closer(c: char) -> bool {
    matches!(c, '"' | '\'' | ')' | ']' | '”' | '’' | '»' | '」' | '』' | '）' | '】' | '》' | '〉')
}

/// Splits one block's prose into sentences, each trimmed, empty ones dropped.
fn split_sentences(text: &str, out: &mut Vec<String>) {
    let mut push = |s: &str| {
        let s = s.trim();
        if !s.is_empty() {
            out.push(s.to_owned());
        }
    };
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if !is_sentence_end(c) {
            continue;
        }
        let mut end = i + c.len_utf8();
        let mut cjk = is_cjk_sentence_end(c);
        while let Some(&(j, d)) = chars.peek() {
            if !is_sentence_end(d) && !is_closer(d) {
                break;
            }
            cjk |= is_cjk_sentence_end(d);
            end = j + d.len_utf8();
            chars.next();
        }
        if cjk || chars.peek().is_none_or(|&(_, d)| d.is_whitespace()) {
            push(&text[start..end]);
            start = end;
        }
    }
    push(&text[start..]);
}

/// Appends the text of raw HTML, without its tags and comments, one line per non-blank
/// line of text.
fn push_html_text(html: &str, out: &mut String) {
    let mut plain = String::with_capacity(html.len());
    let mut rest = html;
    while let Some(lt) = rest.find('<') {
        plain.push_str(&rest[..lt]);
        let markup = &rest[lt..];
        let is_tag = markup[1..].starts_with(|c: char| c.is_ascii_alphabetic() || matches!(c, '/' | '!' | '?'));
        if !is_tag {
            plain.push('<');
            rest = &markup[1..];
            continue;
        }
        // An unterminated tag or comment swallows the rest, as a browser would.
        rest = match markup.strip_prefix("<!--") {
            Some(comment) => comment.find("-->").map_or("", |end| &comment[end + 3..]),
            None => markup.find('>').map_or("", |end| &markup[end + 1..]),
        };
    }
    plain.push_str(rest);
    for line in plain.lines().map(str::trim).filter(|line| !line.is_empty()) {
        out.push_str(line);
        out.push('\n');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn link(target: &str, slug: &str, label: Option<&str>) -> WikiLink {
        WikiLink { target: target.into(), slug: slug.into(), label: label.map(Into::into) }
    }

    fn anchors(md: &str) -> Vec<String> {
        parse(md).headings.into_iter().map(|h| h.anchor).collect()
    }

    // ---- link spans (the importer's rewrites) ----

    #[test]
    fn link_spans_place_every_link_form_outside_code() {
        let md = "---\ntitle: x\n---\n[[A b#h|l]] ![[i.png]] [t](dir/N%20o.md#x) ![alt](img/p.png \"t\")\n`[[code]]`\n";
        let spans = link_spans(md);
        let got: Vec<(LinkKind, &str, &str)> =
            spans.iter().map(|s| (s.kind, &md[s.whole.clone()], &md[s.target.clone()])).collect();
        assert_eq!(
            got,
            [
                (LinkKind::Wiki, "[[A b#h|l]]", "A b"),
                (LinkKind::WikiEmbed, "![[i.png]]", "i.png"),
                (LinkKind::Inline, "[t](dir/N%20o.md#x)", "dir/N%20o.md#x"),
                (LinkKind::InlineImage, "![alt](img/p.png \"t\")", "img/p.png"),
            ]
        );
        assert_eq!(link_slug("A b"), "a-b");
    }

    // ---- titles ----

    #[test]
    fn h1_atx_and_setext() {
        assert_eq!(parse("# Hello *World*  \n\ntext").h1.as_deref(), Some("Hello World"));
        assert_eq!(parse("Setext `Title`\n===\n\nbody").h1.as_deref(), Some("Setext Title"));
        assert_eq!(parse("## Two\n\n# One").h1.as_deref(), Some("One"));
        assert_eq!(parse("Sub\n---\n").h1, None);
        assert_eq!(parse("# [[Some Page|Label]] and [[other]]").h1.as_deref(), Some("Label and other"));
        assert_eq!(parse("# Closed ATX ##").h1.as_deref(), Some("Closed ATX"));
    }

    #[test]
    fn conflict_markers_are_never_the_title() {
        let merged = "Intro line\n<<<<<<< Your edit\nmine\n||||||| Before both edits\nbase\n=======\ntheirs\n>>>>>>> Alice, 2026-12-07 10:02 UTC\n";
        assert_eq!(parse(merged).h1, None);
        let diffy = "<<<<<<< ours\nmine\n=======\ntheirs\n>>>>>>> theirs\n\n# Real";
        assert_eq!(parse(diffy).h1.as_deref(), Some("Real"));
        // A setext underline of seven `=` outside a conflict is a heading as ever.
        assert_eq!(parse("Title\n=======\n\ntext").h1.as_deref(), Some("Title"));
        assert_eq!(parse("<<<<<<< a\nx\n>>>>>>> b\n\nTitle\n=======\n").h1.as_deref(), Some("Title"));
    }

    #[test]
    fn h1_is_first_non_empty_and_outside_code() {
        assert_eq!(parse("```\n# Not me\n```\n\n    # nor me\n\n# Me").h1.as_deref(), Some("Me"));
        assert_eq!(parse("~~~md\n# fenced\n~~~").h1, None);
        assert_eq!(parse("#\n\n# Second").h1.as_deref(), Some("Second"));
        assert_eq!(parse("`# code`").h1, None);
        assert_eq!(parse("> # Quoted\n").h1.as_deref(), Some("Quoted"));
        assert_eq!(parse("#NoSpace").h1, None);
        assert_eq!(parse("\u{feff}# With BOM").h1.as_deref(), Some("With BOM"));
    }

    #[test]
    fn front_matter_title() {
        let p = parse("---\ntitle: '  From YAML '\n---\n# From heading\n");
        assert_eq!(p.front_title.as_deref(), Some("From YAML"));
        assert_eq!(p.h1.as_deref(), Some("From heading"));
        assert_eq!(parse("---\ntitle: 2024\n---\n").front_title.as_deref(), Some("2024"));
        assert_eq!(parse("---\ntitle: ''\n---\n").front_title, None);
        assert_eq!(parse("---\ntitle: [a, b]\n---\n").front_title, None);
        assert_eq!(parse("---\ntitle:\n---\n").front_title, None);
        assert_eq!(parse("---\n- just\n- a list\n---\n").front_title, None);
        assert_eq!(parse("---\r\ntitle: CRLF\r\ntags: [A]\r\n---\r\nbody\r\n").front_title.as_deref(), Some("CRLF"));
    }

    #[test]
    fn invalid_front_matter_is_ignored() {
        let p = parse("---\ntitle: [unclosed\ntags: {\n---\n# Heading #tag\n");
        assert_eq!(p.front_title, None);
        assert_eq!(p.h1.as_deref(), Some("Heading #tag"));
        assert_eq!(p.tags, ["tag"]);
        assert!(!p.text.contains("unclosed"));
        for yaml in ["\t- : :", "*alias", "&a [*a]", "? ? ?", "title: !!binary zz", "{{{{{{{{{{", "- - - - - -"] {
            let _ = parse(&format!("---\n{yaml}\n---\nbody"));
        }
    }

    // ---- tags ----

    #[test]
    fn a_tag_has_at_most_100_characters() {
        let long = "x".repeat(101);
        let ok = "y".repeat(100);
        let parsed = parse(&format!("---\ntags: [{long}, {ok}]\n---\n#{long} #{ok} #fine"));
        assert_eq!(parsed.tags, ["fine", ok.as_str()]);
    }

    #[test]
    fn front_matter_tags_list_and_string() {
        assert_eq!(parse("---\ntags: [Rust, '#Web', rust, 2024]\n---\n").tags, ["2024", "rust", "web"]);
        assert_eq!(parse("---\ntags:\n  - One\n  - two\n  - ''\n  - [nested]\n---\n").tags, ["one", "two"]);
        assert_eq!(parse("---\ntags: 'alpha, Beta  #gamma,,delta'\n---\n").tags, ["alpha", "beta", "delta", "gamma"]);
        assert_eq!(parse("---\ntags: one two\n---\n").tags, ["one", "two"]);
        // Unquoted, ` #` starts a YAML comment.
        assert_eq!(parse("---\ntags: alpha #beta\n---\n").tags, ["alpha"]);
        assert_eq!(parse("---\ntags:\n---\n").tags, Vec::<String>::new());
        assert_eq!(parse("---\ntags: {a: 1}\n---\n").tags, Vec::<String>::new());
    }

    #[test]
    fn inline_tags() {
        let p =
            parse("Intro #Rust and #web-dev, (#paren) #a/b/ #x- #日本語\n\n- item #Rust\n\n| #cell |\n|---|\n| #row |");
        assert_eq!(p.tags, ["a/b", "cell", "paren", "row", "rust", "web-dev", "x", "日本語"]);
        let p = parse("#start of paragraph\nand #next_line");
        assert_eq!(p.tags, ["next_line", "start"]);
        assert_eq!(parse("**#bold** _#em_ ~~#gone~~").tags, ["bold", "em", "gone"]);
        assert_eq!(parse("## Heading with #tag").tags, ["tag"]);
    }

    #[test]
    fn not_tags() {
        let md = "# Title\n\nC# and F#, issue #1 and #123, x#y, ##double, # alone, #-, \\#escaped\n\n\
                  `#code` and\n\n```\n#fenced\n```\n\n    #indented\n\n\
                  [link](http://x.org/#frag) <https://x.org/#auto> ![img #alt](p.png) [[Page#sec]] [[p|#lbl]]\n\n\
                  <div>\n#html\n</div>\n\ntext <span>#inlinehtml</span> `a`#b";
        assert_eq!(parse(md).tags, Vec::<String>::new());
    }

    #[test]
    fn tags_merge_dedup_sort() {
        let p = parse("---\ntags: [Zeta, alpha]\n---\n#ALPHA #beta #Beta #zeta");
        assert_eq!(p.tags, ["alpha", "beta", "zeta"]);
    }

    #[test]
    fn tag_split_by_escape_is_one_tag() {
        // pulldown-cmark splits the text at `\_`; the block is scanned as a whole.
        assert_eq!(parse("#foo\\_bar").tags, ["foo_bar"]);
        assert_eq!(parse("[#linked](url) text").tags, ["linked"]);
    }

    // ---- wikilinks ----

    #[test]
    fn wikilinks_forms() {
        let p = parse(
            "See [[getting-started]], [[Other Page|the *other* one]], [[ spaced | lbl ]], \
             [[anchored#Some Section]], [[piped#sec|L]] and [[empty-label|]].",
        );
        assert_eq!(
            p.links,
            [
                link("getting-started", "getting-started", None),
                link("Other Page", "other-page", Some("the other one")),
                link("spaced", "spaced", Some("lbl")),
                link("anchored", "anchored", None),
                link("piped", "piped", Some("L")),
                link("empty-label", "empty-label", None),
            ]
        );
    }

    #[test]
    fn wikilinks_outside_code_dedup_and_order() {
        let md = "[[b]] `[[in-code]]`\n\n```\n[[fenced]]\n```\n\n    [[indented]]\n\n\
                  [[a]] [[B]] [[b|again]] [[#local]] [[!!!]]\n\n<p>[[html]]</p>";
        let p = parse(md);
        assert_eq!(p.links, [link("b", "b", None), link("a", "a", None)]);
    }

    #[test]
    fn wikilinks_in_headings_lists_tables_and_quotes() {
        let md = "# About [[x]]\n\n- [[y]]\n\n> [[z|Zed]]\n\n| a |\n|---|\n| [[t\\|Tee]] |";
        let p = parse(md);
        assert_eq!(
            p.links,
            [link("x", "x", None), link("y", "y", None), link("z", "z", Some("Zed")), link("t", "t", Some("Tee"))]
        );
    }

    #[test]
    fn wikilink_slug_resolution() {
        let p = parse("[[Straße Café]] [[v1.2]] [[日本語]] [[Folder/Page]] [[.hidden]]");
        let slugs: Vec<_> = p.links.iter().map(|l| l.slug.as_str()).collect();
        assert_eq!(slugs, ["straße-café", "v1.2", "日本語", "folder-page", "hidden"]);
    }

    #[test]
    fn file_embeds_are_not_links_and_note_embeds_are() {
        let p = parse("![[diagram.png]] ![[Scan.PDF]] ![[page|alt]] ![[Other Note#Setup]] [[real]]");
        assert_eq!(
            p.links,
            [link("page", "page", None), link("Other Note", "other-note", None), link("real", "real", None)]
        );
        assert!(p.text.contains("diagram.png"));
    }

    #[test]
    fn obsidian_marks_are_not_text() {
        let p = parse(
            "> [!warning]- Mind the gap\n> Trains ==stop== here. ^gap-1\n\n\
             A `a == b` test.\n\n```\n> [!note] kept ==in code== ^x\n```\n",
        );
        assert!(p.text.starts_with("Mind the gap\nTrains stop here."), "{:?}", p.text);
        assert!(!p.text.contains("[!warning]") && !p.text.contains("^gap-1"));
        assert!(p.text.contains("a == b"), "inline code keeps its marks: {:?}", p.text);
        assert!(p.text.contains("> [!note] kept ==in code== ^x"), "fenced code is left alone: {:?}", p.text);
        assert_eq!(p.sentences, ["Mind the gap", "Trains stop here.", "A a == b test."]);
    }

    // ---- headings ----

    #[test]
    fn headings_and_unique_anchors() {
        let p = parse(
            "# Intro\n\n## Setup\n\n## Setup\n\nSetup\n---\n\n### Setup-1\n\n\
             #### `code` *em*\n\n##### !!!\n\n###### Über Straße",
        );
        let got: Vec<_> = p.headings.iter().map(|h| (h.level, h.text.as_str(), h.anchor.as_str())).collect();
        assert_eq!(
            got,
            [
                (1, "Intro", "intro"),
                (2, "Setup", "setup"),
                (2, "Setup", "setup-1"),
                (2, "Setup", "setup-2"),
                (3, "Setup-1", "setup-1-1"),
                (4, "code em", "code-em"),
                (5, "!!!", "section"),
                (6, "Über Straße", "über-straße"),
            ]
        );
    }

    #[test]
    fn heading_anchor_edge_cases() {
        assert_eq!(anchors("# a\n# a\n# a-1\n# a"), ["a", "a-1", "a-1-1", "a-2"]);
        assert_eq!(anchors("#\n\n#"), ["section", "section-1"]);
        assert_eq!(anchors("# Custom {#my-id}\n\n# Custom"), ["my-id", "custom"]);
        assert_eq!(parse("# Custom {#my-id .cls}").headings[0].text, "Custom");
        assert_eq!(anchors("```\n# no\n```\n<h1>no</h1>\n\n# yes"), ["yes"]);
    }

    // ---- text ----

    #[test]
    fn text_excludes_front_matter_and_markup() {
        let md = "---\ntitle: Secret Title\ntags: [hidden]\n---\n# Head\n\n\
                  Some **bold** and [link](http://u.rl) and [[target]] and [[t|Label]].\n\n\
                  ```rust\nfn main() {}\n```\n\n- a\n- b `c`\n\n\
                  <div>\n<b>html</b> text<!-- comment -->\n</div>\n\n| x | y |\n|---|---|\n| 1 | 2 |";
        let p = parse(md);
        assert!(!p.text.contains("Secret") && !p.text.contains("hidden") && !p.text.contains("title:"), "{}", p.text);
        assert_eq!(p.text, "Head\nSome bold and link and target and Label.\nfn main() {}\na\nb c\nhtml text\nx y\n1 2");
    }

    #[test]
    fn text_edge_cases() {
        assert_eq!(parse("").text, "");
        assert_eq!(parse("---\ntitle: x\n---\n").text, "");
        assert_eq!(parse("a\nb  \nc").text, "a b\nc");
        assert_eq!(parse("a &amp; b\n\n***\n\nc").text, "a & b\nc");
        assert_eq!(parse("![alt text](x.png)").text, "alt text");
    }

    // ---- sentences ----

    #[test]
    fn sentences_basic() {
        let md = "# Not a sentence.\n\nFirst one. Second one! Third?  Fourth\nwraps here.\n\n\
                  - Item one. Item *two*\n- Item three\n\n```\nCode. Not prose.\n```\n\n> Quoted. Too.";
        assert_eq!(
            parse(md).sentences,
            [
                "First one.",
                "Second one!",
                "Third?",
                "Fourth wraps here.",
                "Item one.",
                "Item two",
                "Item three",
                "Quoted.",
                "Too."
            ]
        );
    }

    #[test]
    fn sentences_edge_cases() {
        assert_eq!(parse("Pi is 3.14 today. Yes.").sentences, ["Pi is 3.14 today.", "Yes."]);
        assert_eq!(parse("Really?! (Quite.) Done...").sentences, ["Really?!", "(Quite.)", "Done..."]);
        assert_eq!(parse("Use `cargo build`. See [[page|the page]].").sentences, ["Use cargo build.", "See the page."]);
        assert_eq!(parse("  .  ").sentences, ["."]);
        assert_eq!(parse("| a. b. |\n|---|\n| c. |").sentences, Vec::<String>::new());
        assert_eq!(parse("---\ntitle: A. B.\n---\nBody.").sentences, ["Body."]);
    }

    #[test]
    fn sentences_japanese() {
        assert_eq!(parse("日本語の文です。次の文！最後？").sentences, ["日本語の文です。", "次の文！", "最後？"]);
        assert_eq!(parse("「はい。」と言った。").sentences, ["「はい。」", "と言った。"]);
        assert_eq!(parse("Mixed English. そして日本語。End").sentences, ["Mixed English.", "そして日本語。", "End"]);
    }

    // ---- rewrite_links ----

    #[test]
    fn rewrite_all_forms() {
        let md = "[[old]] [[old|label]] [[Old]] [[OLD]] [[ old ]] [[old#sec]] [[old#sec|L]] [[Other]] [[oldish]]";
        assert_eq!(
            rewrite_links(md, "old", "new").as_deref(),
            Some(
                "[[new]] [[new|label]] [[new|Old]] [[new|OLD]] [[ new ]] [[new#sec]] [[new#sec|L]] [[Other]] [[oldish]]"
            )
        );
        assert_eq!(
            rewrite_links("See [[Old Title]] and [[old title|it]].", "old-title", "fresh").as_deref(),
            Some("See [[fresh|Old Title]] and [[fresh|it]].")
        );
        assert_eq!(rewrite_links("| [[old\\|L]] |\n|---|", "old", "new").as_deref(), Some("| [[new\\|L]] |\n|---|"));
        assert_eq!(
            rewrite_links("[[Old Title#Sec]]", "old-title", "new").as_deref(),
            Some("[[new#Sec|Old Title › Sec]]")
        );
        assert_eq!(
            rewrite_links("| h |\n|---|\n| [[Old Title]] |", "old-title", "new").as_deref(),
            Some("| h |\n|---|\n| [[new\\|Old Title]] |")
        );
        // Replacing a target that holds a backtick would turn the rest into a code span
        // and lose the link to `b`: not rewritten.
        assert_eq!(rewrite_links("![[`Old Title|[[<b>]]`]]", "old-title", "fresh"), None);
    }

    #[test]
    fn a_rewritten_title_link_reads_as_before() {
        for (md, want) in
            [("[[Getting Started]]", "Getting Started"), ("[[Getting Started#Install]]", "Getting Started › Install")]
        {
            let out = rewrite_links(md, "getting-started", "onboarding").unwrap();
            let link = &parse(&out).links[0];
            assert_eq!((link.slug.as_str(), link.label.as_deref()), ("onboarding", Some(want)), "{out}");
        }
    }

    #[test]
    fn renaming_away_and_back_leaves_links_as_written() {
        for md in [
            "See [[Glossary]].",
            "See [[Glossary#Terms]].",
            "| [[Glossary]] |\n|---|",
            "[[glossary]] [[glossary|words]]",
        ] {
            let away = rewrite_links(md, "glossary", "terms").unwrap();
            let back = rewrite_links(&away, "terms", "glossary").unwrap();
            assert_eq!(back, md, "via {away}");
        }
        // A label a person wrote that merely names another page stays a label.
        assert_eq!(rewrite_links("[[old|Other]]", "old", "new").as_deref(), Some("[[new|Other]]"));
    }

    #[test]
    fn rewrite_leaves_everything_else_byte_identical() {
        let template = "---\nlinks: '[[old]]'\n---\r\n# Title [[X]]\r\n\r\n`[[old]]` and [[X]]\r\n\r\n\
                        ```\r\n[[old]]\r\n```\r\n\r\n    [[old]]\r\n\r\n\
                        ![[old.png]] [old](old) <b>[[X]]</b>\r\n\r\n> - [[X|x]]  ![[X#sec]]\r\n";
        let md = template.replace("[[X", "[[old");
        let want = template.replace("[[X", "[[new");
        assert_eq!(rewrite_links(&md, "old", "new"), Some(want.clone()));
        let parsed = parse(&want);
        assert_eq!(parsed.links, [link("new", "new", None)]);
        assert_eq!(rewrite_links("![[Old Title]]", "old-title", "new"), Some("![[new]]".to_owned()));
    }

    #[test]
    fn rewrite_none_when_nothing_changes() {
        assert_eq!(rewrite_links("no links here", "old", "new"), None);
        assert_eq!(rewrite_links("[[other]] `[[old]]`", "old", "new"), None);
        assert_eq!(rewrite_links("[[old]]", "old", "old"), None);
        assert_eq!(rewrite_links("---\nx: '[[old]]'\n---\n", "old", "new"), None);
        assert_eq!(rewrite_links("", "old", "new"), None);
        assert_eq!(rewrite_links("[[#old]]", "old", "new"), None);
    }

    #[test]
    fn rewrite_multibyte_and_multiline() {
        assert_eq!(rewrite_links("日本 [[Café Olé|ç]] ü", "café-olé", "neu").as_deref(), Some("日本 [[neu|ç]] ü"));
        assert_eq!(rewrite_links("a [[Old\nTitle]] b", "old-title", "n").as_deref(), Some("a [[n|Old Title]] b"));
    }

    // ---- replace_h1 ----

    #[test]
    fn replace_h1_keeps_the_markers_and_the_rest() {
        let md = "---\ntags: [a]\n---\n# Getting Started\n\nBody.\n\n# Getting Started\n";
        assert_eq!(
            replace_h1(md, "Getting Started", "Onboarding Guide").as_deref(),
            Some("---\ntags: [a]\n---\n# Onboarding Guide\n\nBody.\n\n# Getting Started\n")
        );
        assert_eq!(replace_h1("Old\n===\n\nx", "Old", "New").as_deref(), Some("New\n===\n\nx"));
        assert_eq!(replace_h1("# Old ##\n", "Old", "New").as_deref(), Some("# New ##\n"));
        assert_eq!(replace_h1("#\n\n# Old *one*\n", "Old one", "New").as_deref(), Some("#\n\n# New\n"));
    }

    #[test]
    fn replace_h1_only_a_heading_that_reads_old() {
        assert_eq!(replace_h1("# Other\n", "Old", "New"), None);
        assert_eq!(replace_h1("## Old\n", "Old", "New"), None);
        assert_eq!(replace_h1("```\n# Old\n```\n", "Old", "New"), None);
        assert_eq!(replace_h1("# Old\n", "Old", "Two\nlines"), None);
    }

    // ---- split_front_matter ----

    #[test]
    fn split_front_matter_cases() {
        assert_eq!(split_front_matter("---\na: 1\n---\nbody"), (Some("a: 1\n"), "body"));
        assert_eq!(split_front_matter("---\na: 1\n...\nbody\n"), (Some("a: 1\n"), "body\n"));
        assert_eq!(split_front_matter("---\na: 1\n---"), (Some("a: 1\n"), ""));
        assert_eq!(split_front_matter("---\n---\nbody"), (Some(""), "body"));
        assert_eq!(split_front_matter("---  \na: 1\n--- \t\nbody"), (Some("a: 1\n"), "body"));
        assert_eq!(split_front_matter("---\r\na: 1\r\n---\r\nbody\r\n"), (Some("a: 1\r\n"), "body\r\n"));
        assert_eq!(split_front_matter("\u{feff}---\na: 1\n---\nbody"), (Some("a: 1\n"), "body"));
        assert_eq!(split_front_matter("---\na: 1\n----\n---\nb"), (Some("a: 1\n----\n"), "b"));
    }

    #[test]
    fn split_front_matter_none() {
        for md in [
            "",
            "---",
            "---\n",
            "---\na: 1\n",
            "---\na: 1\n--\n",
            "\n---\na: 1\n---\n",
            "text\n---\na: 1\n---\n",
            " ---\na: 1\n---\n",
            "----\na: 1\n----\n",
            "--- x\na: 1\n---\n",
            "...\na: 1\n...\n",
            "---\na: 1\n ---\n",
        ] {
            assert_eq!(split_front_matter(md), (None, md), "{md:?}");
        }
    }

    #[test]
    fn mid_document_rules_are_not_front_matter() {
        let p = parse("Intro.\n\n---\n\nMiddle #tag.\n\n---\n\nEnd.");
        assert_eq!(p.sentences, ["Intro.", "Middle #tag.", "End."]);
        assert_eq!(p.tags, ["tag"]);
        assert_eq!(
            rewrite_links("a\n\n---\n[[old]]\n---\n", "old", "new").as_deref(),
            Some("a\n\n---\n[[new]]\n---\n")
        );
    }

    // ---- robustness ----

    #[test]
    fn robust_on_hostile_input() {
        let inputs = [
            ">".repeat(50_000),
            "[".repeat(50_000),
            "[[".repeat(30_000) + &"]]".repeat(30_000),
            "[[[[^(\n|]]]]=]]]]]]]]\n".repeat(2_000),
            "- ".repeat(10_000) + "x",
            "*".repeat(50_000),
            "`".repeat(50_000),
            "#".repeat(50_000),
            "# a\n".repeat(20_000),
            "---\n".to_owned() + &"- [".repeat(10_000) + "\n---\n",
            "---\n".to_owned() + &"a:\n ".repeat(5_000) + "\n---\n",
            "<!--".repeat(10_000),
            "|a|\n|-|\n".to_owned() + &"|[[x\\|y]]|\n".repeat(5_000),
            "\u{feff}".repeat(3) + "---",
            "\r\n".repeat(10_000),
        ];
        for input in &inputs {
            let _ = parse(input);
            let _ = rewrite_links(input, "x", "y");
            let _ = replace_h1(input, "a", "b");
            let _ = split_front_matter(input);
        }
    }

    #[test]
    fn one_mebibyte_page() {
        let para = "Some prose with a #tag, a [[Link Target|label]], `code` and **bold** text. Another sentence!\n\n";
        let mut md = String::from("---\ntitle: Big\ntags: [a, b]\n---\n# Big page\n\n");
        while md.len() < 1 << 20 {
            md.push_str(para);
            md.push_str("## Section\n\n```\ncode [[not-a-link]]\n```\n\n");
        }
        let p = parse(&md);
        assert_eq!(p.front_title.as_deref(), Some("Big"));
        assert_eq!(p.tags, ["a", "b", "tag"]);
        assert_eq!(p.links.len(), 1);
        assert!(p.headings.len() > 1000);
        assert_eq!(p.headings.last().map(|h| h.anchor.clone()), Some(format!("section-{}", p.headings.len() - 2)));
        let rewritten = rewrite_links(&md, "link-target", "moved").expect("changed");
        assert_eq!(
            rewritten.len(),
            md.len() - ("Link Target".len() - "moved".len()) * md.matches("[[Link Target|").count()
        );
    }

    /// Text made of the pieces markdown and Cairn's extensions are made of, in any order.
    fn markdown_like() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let piece = prop_oneof![
            Just("[[".to_owned()),
            Just("]]".to_owned()),
            Just("|".to_owned()),
            Just("\\|".to_owned()),
            Just("#".to_owned()),
            Just("# ".to_owned()),
            Just("\n".to_owned()),
            Just("\n\n".to_owned()),
            Just("---\n".to_owned()),
            Just("```".to_owned()),
            Just("`".to_owned()),
            Just("tags: [a, b]\n".to_owned()),
            Just("title: T\n".to_owned()),
            Just("> ".to_owned()),
            Just("- [ ] ".to_owned()),
            Just("| a | b |\n|---|---|\n".to_owned()),
            Just("![[".to_owned()),
            Just("===\n".to_owned()),
            Just("<b>".to_owned()),
            Just("Old Title".to_owned()),
            Just("old".to_owned()),
            "[a-zA-Z ]{0,8}",
            any::<char>().prop_map(String::from),
        ];
        proptest::collection::vec(piece, 0..60).prop_map(|v| v.concat())
    }

    /// Inputs built to make a parser recurse, backtrack or copy without end — deep
    /// nesting, long runs of openers with no closers, thousands of front-matter fences —
    /// all parse, in output no larger than a small multiple of the input: no panic, no
    /// hang, bounded memory.
    #[test]
    fn pathological_inputs_parse_in_bounded_output() {
        let n = 40_000;
        let inputs = [
            "[[".repeat(n),
            "![[".repeat(n),
            format!("{}{}", "[".repeat(n), "]".repeat(n)),
            ">".repeat(n),
            "> ".repeat(n) + "text",
            "- ".repeat(n) + "item",
            "*".repeat(n),
            "`".repeat(n),
            "#".repeat(n),
            "---\n".repeat(n / 4),
            format!("---\n{}---\n", "tags: [a, b]\n".repeat(n / 10)),
            "#tag ".repeat(n / 5),
            "[[a|".repeat(n / 4),
            "<div>".repeat(n / 5),
            "\\".repeat(n),
        ];
        for text in &inputs {
            let p = parse(text);
            assert!(p.text.len() <= 2 * text.len() + 16, "text of {} bytes from {} bytes", p.text.len(), text.len());
            assert!(p.sentences.iter().map(String::len).sum::<usize>() <= 2 * text.len() + 16);
            assert!(p.links.len() + p.tags.len() + p.headings.len() <= text.len());
            let _ = rewrite_links(text, "a", "b");
            let _ = link_spans(text);
        }
    }

    proptest::proptest! {
        /// Any such text parses without a panic, every link it reports is to a slug, and
        /// the other readers of a page's text take it too.
        #[test]
        fn any_text_parses(text in markdown_like()) {
            let p = parse(&text);
            for l in &p.links {
                proptest::prop_assert!(Slug::is_valid(&l.slug), "{:?} in {text:?}", l.slug);
            }
            let _ = split_front_matter(&text);
            let _ = link_spans(&text);
            let _ = replace_h1(&text, "Old Title", "New Title");
        }

        /// A rename's rewrite leaves no link to the old page and keeps every other link.
        #[test]
        fn a_rewrite_moves_every_link_and_only_those(text in markdown_like()) {
            let before = parse(&text);
            if let Some(out) = rewrite_links(&text, "old-title", "fresh") {
                let after = parse(&out);
                proptest::prop_assert!(!after.links.iter().any(|l| l.slug == "old-title"), "{text:?} -> {out:?}");
                let others = |p: &Parsed| p.links.iter().filter(|l| l.slug != "old-title" && l.slug != "fresh").map(|l| l.slug.clone()).collect::<Vec<_>>();
                proptest::prop_assert_eq!(others(&before), others(&after), "{:?} -> {:?}", text, out);
            }
        }
    }
}
