//! Time: the service's clock, and timestamps as stored — RFC 3339 UTC strings with
//! microseconds in the database (they sort as text on both backends) and unix seconds
//! where arithmetic is needed (expiry, windows).

use std::sync::atomic::{AtomicI64, Ordering};

use chrono::{DateTime, SecondsFormat, Utc};
use serde::{Deserialize, Serialize};

/// The clock every core function reads. It is the system clock, plus an offset that
/// only tests move ([`Clock::advance`]), so expiry and window tests need not sleep.
#[derive(Debug, Default)]
pub struct Clock {
    offset_ms: AtomicI64,
}

impl Clock {
    pub fn now(&self) -> DateTime<Utc> {
        Utc::now() + chrono::Duration::milliseconds(self.offset_ms.load(Ordering::Relaxed))
    }

    /// Now as stored and answered: `2026-11-22T14:50:04.123456Z`.
    pub fn rfc3339(&self) -> Timestamp {
        stored(self.now())
    }

    /// Now in unix seconds.
    pub fn unix(&self) -> i64 {
        self.now().timestamp()
    }

    /// Moves the clock forward (tests).
    pub fn advance(&self, by: std::time::Duration) {
        self.offset_ms.fetch_add(by.as_millis() as i64, Ordering::Relaxed);
    }
}

/// A time as stored and answered: RFC 3339 in UTC with microseconds
/// (`2026-11-22T14:50:04.123456Z`), the form that sorts as text on both backends, so
/// `ORDER BY` and `<` on the column agree with time. Made from a clock reading or a
/// [`DateTime`], never from free text; read back from the database as it was stored.
/// On the wire it is a plain string (the API's schemas say `string`).
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, sqlx::Type)]
#[serde(transparent)]
#[sqlx(transparent)]
pub struct Timestamp(String);

impl Timestamp {
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Its unix second; None for a value that is no RFC 3339 time.
    pub(crate) fn unix(&self) -> Option<i64> {
        DateTime::parse_from_rfc3339(&self.0).ok().map(|t| t.timestamp())
    }

    /// A time written out earlier (a `Cairn-Time` trailer), in the stored form; None for
    /// text that is no RFC 3339 time.
    pub(crate) fn parse(text: &str) -> Option<Timestamp> {
        DateTime::parse_from_rfc3339(text).ok().map(|t| Timestamp::from(t.with_timezone(&Utc)))
    }

    /// Unix seconds (for times kept as integers), to the second.
    pub(crate) fn from_unix(secs: i64) -> Timestamp {
        Timestamp(DateTime::from_timestamp(secs, 0).unwrap_or_default().to_rfc3339_opts(SecondsFormat::Secs, true))
    }
}

impl From<DateTime<Utc>> for Timestamp {
    fn from(t: DateTime<Utc>) -> Timestamp {
        Timestamp(t.to_rfc3339_opts(SecondsFormat::Micros, true))
    }
}

impl std::fmt::Display for Timestamp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// A time as stored and answered (see [`Timestamp`]).
pub(crate) fn stored(t: DateTime<Utc>) -> Timestamp {
    Timestamp::from(t)
}
