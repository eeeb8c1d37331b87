//! An SVG's references kept to its own `#fragments` (and inline `data:` images).
//!
//! svg-hush turns an external reference into a same-origin one — `href="http://host/leak.png"`
//! becomes `/leak.png`, and `/api/…` stays as written — so an upload opened on its own
//! would make the reader's browser send requests, with the reader's cookies, to paths the
//! uploader chose. This pass, run on svg-hush's output, drops every `href` that is not a
//! fragment or a `data:` URL and turns every `url(…)` that is not `url(#…)` into `none`,
//! in attributes and in `<style>` text alike.

use xml::reader::XmlEvent as Read;
use xml::writer::XmlEvent as Write;
use xml::{EmitterConfig, ParserConfig};

/// `doc` (svg-hush's output) with its references to anything but its own fragments
/// removed. None when it does not parse (it always does: svg-hush wrote it).
pub(super) fn only_fragment_references(doc: &[u8]) -> Option<Vec<u8>> {
    let reader = ParserConfig::new().cdata_to_characters(true).create_reader(doc);
    let mut out = Vec::with_capacity(doc.len());
    let mut writer = EmitterConfig::new().perform_indent(false).pad_self_closing(false).create_writer(&mut out);
    let mut in_style = 0usize;
    for event in reader {
        let event = event.ok()?;
        match &event {
            Read::StartElement { name, attributes, namespace } => {
                if name.local_name == "style" {
                    in_style += 1;
                }
                let kept: Vec<xml::attribute::OwnedAttribute> = attributes
                    .iter()
                    .filter(|a| a.name.local_name != "href" || is_own(&a.value))
                    .map(|a| xml::attribute::OwnedAttribute { name: a.name.clone(), value: own_urls(&a.value) })
                    .collect();
                writer
                    .write(Write::StartElement {
                        name: name.borrow(),
                        attributes: kept.iter().map(|a| a.borrow()).collect(),
                        namespace: namespace.borrow(),
                    })
                    .ok()?;
            }
            Read::EndElement { name } => {
                if name.local_name == "style" {
                    in_style = in_style.saturating_sub(1);
                }
                writer.write(Write::EndElement { name: Some(name.borrow()) }).ok()?;
            }
            Read::Characters(text) if in_style > 0 => writer.write(Write::Characters(&own_urls(text))).ok()?,
            Read::EndDocument => break,
            other => {
                if let Some(w) = other.as_writer_event() {
                    writer.write(w).ok()?;
                }
            }
        }
    }
    Some(out)
}

/// A reference the document may keep: to one of its own fragments, or inline data.
fn is_own(url: &str) -> bool {
    let url = url.trim();
    url.starts_with('#') || url.get(..5).is_some_and(|s| s.eq_ignore_ascii_case("data:"))
}

/// `text` with every `url(…)` that does not name a fragment of the document made `none`.
fn own_urls(text: &str) -> String {
    let lower = text.to_ascii_lowercase();
    if !lower.contains("url(") {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    while let Some(found) = lower[at..].find("url(") {
        let start = at + found;
        let inner_start = start + 4;
        let end = text[inner_start..].find(')').map_or(text.len(), |e| inner_start + e + 1);
        out.push_str(&text[at..start]);
        let inner = text[inner_start..end].trim_end_matches(')').trim().trim_matches(['"', '\'']).trim();
        if inner.starts_with('#') {
            out.push_str(&text[start..end]);
        } else {
            out.push_str("none");
        }
        at = end;
    }
    out.push_str(&text[at..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_fragments_and_inline_data_are_kept() {
        let doc = br##"<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink"><defs><linearGradient id="g"/></defs><style>.a{fill:url(/api/me)} .b{fill:url( '#g' )}</style><image href="/leak/img.png"/><use href="#g"/><use xlink:href="/api/tokens"/><image href="data:image/png;base64,iVBORw0KGgo="/><rect style="filter:url(/api/pages);mask:url(#g)" fill="url(&quot;/x&quot;)"/></svg>"##;
        let out = String::from_utf8(only_fragment_references(doc).unwrap()).unwrap();
        assert!(!out.contains("/leak") && !out.contains("/api/"), "{out}");
        assert!(out.contains(r##"href="#g""##) && out.contains("data:image/png"), "{out}");
        assert!(out.contains("url( '#g' )") && out.contains("mask:url(#g)") && out.contains("filter:none"), "{out}");
        assert!(out.contains(r#"fill="none""#), "{out}");
    }
}
