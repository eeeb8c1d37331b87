//! Filling a fresh server with the first pages of the corpus, before anything is timed.

use std::sync::Arc;
use std::time::{Duration, Instant};

use reqwest::Client;
use serde_json::json;

use crate::corpus::Page;
use crate::load::{self, Req, RunOpts, Stats};

/// Creates `pages` with `concurrency` clients (a child waits for its parent) and stops
/// starting new ones after `budget_secs`. The pages created are the indices in `ok` of
/// the answer. Progress and errors go to stderr.
pub async fn create_pages(
    clients: &[Client],
    base: &str,
    pages: &[Page],
    concurrency: usize,
    budget_secs: u64,
) -> Stats {
    let size = pages.len();
    eprintln!("creating {size} pages with {concurrency} clients (budget {budget_secs} s)…");
    let reqs: Vec<Req> = pages
        .iter()
        .map(|p| {
            let mut r = Req::post(
                "/api/pages",
                json!({"slug": p.slug, "title": p.title, "content": p.content, "parent": p.parent.map(|i| &pages[i].slug)}),
            );
            r.after = p.parent;
            r
        })
        .collect();
    let deadline = Instant::now() + Duration::from_secs(budget_secs);
    let setup = load::run(
        clients,
        base,
        Arc::new(reqs),
        RunOpts { workers: concurrency, keep_bodies: false, deadline: Some(deadline) },
    )
    .await;
    eprintln!(
        "  created {} of {size} pages in {:.1} s ({:.1} pages/s; p50 {:.2} ms, p99 {:.2} ms; {} errors, {} skipped)",
        setup.ok.len(),
        setup.wall_secs,
        setup.ok.len() as f64 / setup.wall_secs,
        setup.pct(50.0),
        setup.pct(99.0),
        setup.errors,
        setup.skipped
    );
    load::print_errors(&setup);
    setup
}
