//! Numbers as the reports print them: Markdown cells (`–` for a missing value) and JSON
//! values (`null` for one), latency statistics as one JSON object.

use serde_json::{Value, json};

use crate::load::Stats;

/// Two decimals, `–` when not a number (e.g. a percentile of no request).
pub fn f2(x: f64) -> String {
    if x.is_finite() { format!("{x:.2}") } else { "–".to_owned() }
}

/// No decimals, `–` when not a number.
pub fn f0(x: f64) -> String {
    if x.is_finite() { format!("{x:.0}") } else { "–".to_owned() }
}

/// Rounded to two decimals; `null` when not a number (JSON has no NaN).
pub fn round2(x: f64) -> Value {
    if x.is_finite() { json!((x * 100.0).round() / 100.0) } else { Value::Null }
}

/// Rounded to three decimals (a settled file creation is a few hundredths of a ms).
pub fn round3(x: f64) -> Value {
    if x.is_finite() { json!((x * 1000.0).round() / 1000.0) } else { Value::Null }
}

/// The latency cells every report table shares: `p50 | p95 | p99 | mean | max | ops/s`.
pub fn latency_cells(st: &Stats) -> String {
    format!(
        "{} | {} | {} | {} | {} | {}",
        f2(st.pct(50.0)),
        f2(st.pct(95.0)),
        f2(st.pct(99.0)),
        f2(st.mean()),
        f2(st.max()),
        f0(st.ops_per_sec())
    )
}

pub fn stats_json(st: &Stats) -> Value {
    json!({
        "count": st.count, "errors": st.errors,
        "p50_ms": round2(st.pct(50.0)), "p95_ms": round2(st.pct(95.0)), "p99_ms": round2(st.pct(99.0)),
        "mean_ms": round2(st.mean()), "max_ms": round2(st.max()),
        "ops_per_sec": round2(st.ops_per_sec()), "wall_secs": round2(st.wall_secs),
        "error_samples": st.error_samples,
    })
}
