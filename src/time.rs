//! Time: the service's clock, and timestamps as stored — RFC 3339 UTC strings with
//! microseconds in the database (they sort as text on both backends) and unix seconds
//! where arithmetic is needed (expiry, windows).

use std::sync::atomic::{AtomicI64, Ordering};

use chrono::{DateTime, SecondsFormat, Utc};

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
    pub fn rfc3339(&self) -> String {
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

/// A time as stored and answered (see [`Clock::rfc3339`]): the form that sorts as text.
pub(crate) fn stored(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Micros, true)
}

/// Unix seconds → RFC 3339 (for values kept as integers).
pub(crate) fn rfc3339_from_unix(secs: i64) -> String {
    DateTime::from_timestamp(secs, 0).unwrap_or_default().to_rfc3339_opts(SecondsFormat::Secs, true)
}
