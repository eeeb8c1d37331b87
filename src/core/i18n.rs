//! Interface languages and their message catalogues (the web app's strings), embedded
//! in the binary from `i18n/*.json`.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use crate::error::{Error, Result};

pub(crate) const LANGUAGES: &[&str] = &["en", "de", "fr", "es", "ja"];

static CATALOGUES: LazyLock<BTreeMap<&'static str, BTreeMap<String, String>>> = LazyLock::new(|| {
    let sources = [
        ("en", include_str!("../../i18n/en.json")),
        ("de", include_str!("../../i18n/de.json")),
        ("fr", include_str!("../../i18n/fr.json")),
        ("es", include_str!("../../i18n/es.json")),
        ("ja", include_str!("../../i18n/ja.json")),
    ];
    sources
        .into_iter()
        .map(|(code, text)| (code, serde_json::from_str(text).expect("i18n catalogues are valid JSON (tested)")))
        .collect()
});

/// The code if it is a shipped language (case-insensitive), else 400.
pub(crate) fn check_language(code: &str) -> Result<String> {
    let code = code.trim().to_lowercase();
    if LANGUAGES.contains(&code.as_str()) { Ok(code) } else { Err(Error::unknown_language(&code, LANGUAGES)) }
}

/// Picks the language: `lang=`, then the user's, then `Accept-Language`, then `en`.
pub(crate) fn choose(param: Option<&str>, user: Option<&str>, accept_language: Option<&str>) -> &'static str {
    let known = |c: &str| LANGUAGES.iter().copied().find(|l| l.eq_ignore_ascii_case(c.trim()));
    if let Some(l) = param.and_then(known) {
        return l;
    }
    if let Some(l) = user.and_then(known) {
        return l;
    }
    if let Some(header) = accept_language {
        let mut ranked: Vec<(f32, &str)> = header
            .split(',')
            .filter_map(|part| {
                let mut it = part.split(';');
                let tag = it.next()?.trim();
                let q = it.find_map(|p| p.trim().strip_prefix("q=").and_then(|q| q.parse::<f32>().ok())).unwrap_or(1.0);
                Some((q, tag))
            })
            .collect();
        ranked.sort_by(|a, b| b.0.total_cmp(&a.0));
        for (q, tag) in ranked {
            let primary = tag.split('-').next().unwrap_or(tag);
            if q > 0.0
                && let Some(l) = known(primary)
            {
                return l;
            }
        }
    }
    "en"
}

pub(crate) fn messages(lang: &str) -> &'static BTreeMap<String, String> {
    CATALOGUES.get(lang).or_else(|| CATALOGUES.get("en")).expect("en catalogue is embedded")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn catalogues_share_their_keys() {
        let en: Vec<_> = messages("en").keys().collect();
        assert!(en.len() >= 50);
        for l in LANGUAGES {
            let keys: Vec<_> = messages(l).keys().collect();
            assert_eq!(keys, en, "{l} has different keys than en");
        }
    }

    #[test]
    fn choice_order() {
        assert_eq!(choose(Some("de"), Some("fr"), Some("ja")), "de");
        assert_eq!(choose(Some("xx"), Some("fr"), Some("ja")), "fr");
        assert_eq!(choose(None, None, Some("es-MX,es;q=0.9,en;q=0.8")), "es");
        assert_eq!(choose(None, None, Some("da, ja;q=0.5, fr;q=0.7")), "fr");
        assert_eq!(choose(None, None, None), "en");
    }
}
