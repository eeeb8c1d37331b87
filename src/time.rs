//! Timestamps: RFC 3339 UTC strings with microseconds in the database (they sort as
//! text on both backends) and unix seconds where arithmetic is needed (expiry, windows).

use chrono::{SecondsFormat, Utc};

/// Now as stored and answered: `2026-11-22T14:50:04.123456Z`.
pub fn now_rfc3339() -> String {
    Utc::now().to_rfc3339_opts(SecondsFormat::Micros, true)
}

pub fn unix_now() -> i64 {
    Utc::now().timestamp()
}

/// Unix seconds → RFC 3339 (for values kept as integers).
pub fn rfc3339_from_unix(secs: i64) -> String {
    chrono::DateTime::from_timestamp(secs, 0).unwrap_or_default().to_rfc3339_opts(SecondsFormat::Secs, true)
}
