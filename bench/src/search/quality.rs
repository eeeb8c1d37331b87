//! `quality`: how well each search mode ranks the CISI abstracts for the 76 judged
//! queries, beside the reference BM25 of /work/shared/relevance/README.md.
//!
//! The corpus is loaded once. Keyword, semantic and hybrid are asked of the plain
//! server (TF-IDF for meaning-level search); with `--model-dir` the same data directory
//! and database are served again with SEMANTIC_SEARCH=1 (semantic and hybrid, once every
//! page is embedded), then with RERANK=1 too (hybrid). Rows carry the engine the server
//! reported, not the mode asked for.

use std::fmt::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Result, bail};
use cairn_bench::api::{create_workspace, get_json, sign_up};
use cairn_bench::load::{self, Req, RunOpts, Stats, print_errors};
use cairn_bench::numbers::{f2, round2, stats_json};
use cairn_bench::server::{self, Server};
use reqwest::Client;
use serde_json::{Value, json};

use crate::Common;
use crate::bm25::Bm25;
use crate::cisi::{self, Collection};
use crate::metrics::{self, Scores};
use crate::search_api::{Answer, EmbedWait, Embedded, MODES, engine_label, model_env, search_path, wait_embedded};

/// Measures are taken at rank 10, and searches ask for 10 results.
const K: usize = 10;
/// The workspace the collection is loaded into.
const WS: &str = "cisi";
/// What the server reads of a query (src/core/search/mod.rs).
const SERVER_MAX_CHARS: usize = 1000;
const SERVER_MAX_TERMS: usize = 32;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Directory holding CISI.ALL, CISI.QRY and CISI.REL (read in place).
    #[arg(long, default_value = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/relevance/cisi"))]
    cisi: PathBuf,
    /// Concurrent clients creating the 1,460 pages.
    #[arg(long, default_value_t = 4)]
    load_concurrency: usize,
    /// Write the results as JSON here.
    #[arg(long, default_value = "search-quality.json")]
    out: PathBuf,
    #[command(flatten)]
    common: Common,
}

/// One ranking evaluated over the judged queries.
struct Row {
    /// The engine the server reported, or the reference's name.
    label: String,
    /// The mode asked for (empty for the reference).
    mode: &'static str,
    /// Server settings of the run.
    config: &'static str,
    /// Per judged query (in `Collection::queries` order): the top-k document ids, or
    /// None when the request failed.
    ranked: Vec<Option<Vec<u32>>>,
    /// Latency of the searches (None for the reference, computed here).
    stats: Option<Stats>,
}

impl Row {
    fn scores(&self, col: &Collection) -> Vec<Option<Scores>> {
        self.ranked
            .iter()
            .zip(&col.queries)
            .map(|(r, q)| r.as_ref().map(|r| metrics::score(r, &col.relevant[&q.id], K)))
            .collect()
    }

    fn mean(&self, col: &Collection) -> Scores {
        let answered: Vec<Scores> = self.scores(col).into_iter().flatten().collect();
        metrics::mean(&answered, col.queries.len())
    }

    fn answered(&self) -> usize {
        self.ranked.iter().filter(|r| r.is_some()).count()
    }
}

/// Wall times of the setup steps, for the report.
#[derive(Default)]
struct Timings {
    load: Option<Stats>,
    embed: Vec<(&'static str, f64, EmbedWait)>,
}

pub async fn run(a: Args) -> Result<()> {
    a.common.check_server_bin()?;
    let col = cisi::load(&a.cisi)?;
    eprintln!(
        "CISI: {} documents, {} queries of which {} judged, {} relevant pairs",
        col.docs.len(),
        col.queries_in_file,
        col.queries.len(),
        col.relevant.values().map(|r| r.len()).sum::<usize>()
    );
    let cut: Vec<ServerView> = col.queries.iter().map(|q| server_view(&q.full())).collect();
    let long = cut.iter().filter(|v| v.chars_cut).count();
    let many = cut.iter().filter(|v| v.terms > SERVER_MAX_TERMS).count();
    let truncation = format!(
        "{long} of the {} judged queries are longer than {SERVER_MAX_CHARS} characters and {many} have more than \
         {SERVER_MAX_TERMS} terms; the server reads only the first {SERVER_MAX_CHARS} characters and \
         {SERVER_MAX_TERMS} terms (longest query: {} characters, {} terms).",
        col.queries.len(),
        col.queries.iter().map(|q| q.full().chars().count()).max().unwrap_or(0),
        cut.iter().map(|v| v.terms).max().unwrap_or(0),
    );
    eprintln!("  {truncation}");

    let mut rows = reference_rows(&col, &cut);
    let mut known_rows = Vec::new();
    let mut timings = Timings::default();
    let served = measure_server(&a, &col, &mut rows, &mut known_rows, &mut timings).await;
    // Whatever the server part managed is reported, also when it failed part way.
    let known = col.known_items();
    print!("{}", markdown(&col, &rows, &timings, &truncation));
    print!("{}", known_markdown(&known, &known_rows));
    let mut out = to_json(&a, &col, &rows, &timings, &truncation);
    out["known_item"] = json!({"queries": known.queries.len(), "rows": known_rows.iter().map(|r| known_json(&known, r)).collect::<Vec<_>>()});
    std::fs::write(&a.out, serde_json::to_string_pretty(&out)?)?;
    eprintln!("wrote {}", a.out.display());
    served
}

/// The reference BM25 three times: as the README computes it (the `.W` text of each
/// query), on the query Cairn is sent (title + text), and on the part of that the server
/// reads, which tells what the server's cut costs apart from how it ranks.
fn reference_rows(col: &Collection, cut: &[ServerView]) -> Vec<Row> {
    let texts: Vec<String> = col.docs.iter().map(|d| format!("{} {}", d.title, d.abstract_)).collect();
    let bm25 = Bm25::new(col.docs.iter().zip(&texts).map(|(d, t)| (d.id, t.as_str())));
    let row = |config: &'static str, queries: Vec<String>| Row {
        label: "reference BM25".into(),
        mode: "",
        config,
        ranked: queries.iter().map(|q| Some(bm25.top(q, K))).collect(),
        stats: None,
    };
    vec![
        row("README: query text (.W)", col.queries.iter().map(|q| q.text.clone()).collect()),
        row("query as sent (title + text)", col.queries.iter().map(|q| q.full()).collect()),
        row("query as the server cuts it", cut.iter().map(|v| v.text.clone()).collect()),
    ]
}

async fn measure_server(
    a: &Args,
    col: &Collection,
    rows: &mut Vec<Row>,
    known_rows: &mut Vec<Row>,
    timings: &mut Timings,
) -> Result<()> {
    let mut server = Server::start(server::Options {
        bin: &a.common.server_bin,
        backend: a.common.backend()?,
        tag: "cisi".into(),
        pg_url: &a.common.pg_url,
        keep: a.common.keep,
        env: Vec::new(),
    })
    .await?;
    let token = sign_up(&server.base).await?;
    let clients = load::clients(a.load_concurrency.max(1), &token)?;
    create_workspace(&clients[0], &server.base, "CISI", WS).await?;

    eprintln!("loading {} documents as pages with {} clients…", col.docs.len(), a.load_concurrency);
    let reqs: Vec<Req> = col
        .docs
        .iter()
        .map(|d| Req::post(&format!("/api/pages?ws={WS}"), json!({"slug": d.slug(), "content": d.content()})))
        .collect();
    let loaded = load::run(
        &clients,
        &server.base,
        Arc::new(reqs),
        RunOpts { workers: a.load_concurrency, keep_bodies: false, deadline: None },
    )
    .await;
    eprintln!(
        "  {} pages in {:.1} s ({:.1} pages/s; {} errors)",
        loaded.ok.len(),
        loaded.wall_secs,
        loaded.ok.len() as f64 / loaded.wall_secs,
        loaded.errors
    );
    print_errors(&loaded);
    let none_loaded = loaded.ok.is_empty();
    timings.load = Some(loaded);
    if none_loaded {
        bail!("no page could be created");
    }

    let client = &clients[0];
    // Keyword search ranks in the process once the workspace's term statistics are built
    // (the first keyword query starts that in the background and ranks in the database);
    // a semantic query waits for them, so every judged query is ranked the same way.
    get_json(client, &server.base, &search_path(&col.queries[0].full(), "semantic", K, Some(WS))).await?;
    for mode in MODES {
        rows.push(evaluate(client, &server.base, col, mode, "plain").await);
    }
    let known = col.known_items();
    eprintln!("{} known-item queries (title words):", known.queries.len());
    for mode in MODES {
        known_rows.push(evaluate(client, &server.base, &known, mode, "plain").await);
    }

    let Some(model_dir) = &a.common.model_dir else { return Ok(()) };
    let timeout = Duration::from_secs(a.common.embed_timeout_secs);
    let probe = search_path(&col.queries[0].full(), "semantic", K, Some(WS));
    let configs: [(&'static str, bool, &[&'static str]); 2] =
        [("SEMANTIC_SEARCH=1", false, &["semantic", "hybrid"]), ("SEMANTIC_SEARCH=1 RERANK=1", true, &["hybrid"])];
    for (config, rerank, modes) in configs {
        eprintln!("restarting the server with {config} over the same data…");
        let t0 = Instant::now();
        server.restart(&model_env(model_dir, rerank, a.common.rerank_model_dir.as_deref())?).await?;
        let started = t0.elapsed().as_secs_f64();
        let wait = wait_embedded(client, &server.base, &probe, timeout).await?;
        eprintln!(
            "  started in {started:.1} s; {}; /api/system: semantic_search {}, rerank_engine {}",
            wait.describe(),
            wait.system["semantic_search"],
            wait.system["rerank_engine"]
        );
        let done = matches!(wait.outcome, Embedded::Done);
        timings.embed.push((config, started, wait));
        if !done {
            eprintln!("  skipping the runs of {config}");
            continue;
        }
        for &mode in modes {
            let row = evaluate(client, &server.base, col, mode, config).await;
            if config.contains("RERANK") && !row.label.ends_with("+rerank") {
                eprintln!("  NOTE: with RERANK=1 hybrid answers report engine {:?}, not …+rerank", row.label);
            }
            rows.push(row);
            known_rows.push(evaluate(client, &server.base, &known, mode, config).await);
        }
    }
    let problems = server.logged_problems();
    if problems > 0 {
        eprintln!("the server logged {problems} warning/error lines; last lines:\n{}", server.log_tail());
    }
    server.stop();
    Ok(())
}

/// Asks every judged query in `mode`, one at a time.
async fn evaluate(client: &Client, base: &str, col: &Collection, mode: &'static str, config: &'static str) -> Row {
    let reqs: Vec<Req> = col.queries.iter().map(|q| Req::get(search_path(&q.full(), mode, K, Some(WS)))).collect();
    let st = load::run(
        std::slice::from_ref(client),
        base,
        Arc::new(reqs),
        RunOpts { workers: 1, keep_bodies: true, deadline: None },
    )
    .await;
    let mut ranked = vec![None; col.queries.len()];
    let mut engines = Vec::new();
    for (i, body) in &st.bodies {
        match Answer::parse(body) {
            Ok(answer) => {
                ranked[*i] = Some(answer.slugs.iter().filter_map(|s| cisi::doc_id(s)).collect());
                engines.push(answer.engine);
            }
            Err(e) => eprintln!("    query {}: {e:#}", col.queries[*i].id),
        }
    }
    let row = Row { label: engine_label(engines.iter().map(String::as_str)), mode, config, ranked, stats: None };
    let m = row.mean(col);
    eprintln!(
        "  {mode:<8} → {:<22} nDCG@10 {:.3}  recall@10 {:.3}  MRR@10 {:.3}  ({} of {} answered; p50 {:.1} ms, max {:.1} ms)",
        row.label,
        m.ndcg,
        m.recall,
        m.rr,
        row.answered(),
        col.queries.len(),
        st.pct(50.0),
        st.max()
    );
    print_errors(&st);
    Row { stats: Some(st), ..row }
}

/// A query as the server reads it, for the reference BM25 (the tokens it searches for).
struct ServerView {
    /// The words of the terms kept, negated ones left out.
    text: String,
    /// Terms in the first SERVER_MAX_CHARS characters, before the cut to SERVER_MAX_TERMS.
    terms: usize,
    chars_cut: bool,
}

/// Mirrors src/core/search/query.rs: the first SERVER_MAX_CHARS characters, split at
/// white space into terms (a `"quoted phrase"` is one term; `AND` and `OR` are passed
/// over; `NOT` or a leading `-` excludes the next term; a chunk without letters or
/// digits is no term), the first SERVER_MAX_TERMS terms kept.
fn server_view(q: &str) -> ServerView {
    let chars_cut = q.chars().count() > SERVER_MAX_CHARS;
    let raw: String = q.chars().take(SERVER_MAX_CHARS).collect();
    let mut terms: Vec<(String, bool)> = Vec::new();
    let mut negate_next = false;
    let mut rest = raw.trim_start();
    while !rest.is_empty() {
        let negated = std::mem::take(&mut negate_next) | rest.starts_with('-');
        let body = rest.trim_start_matches('-');
        let (chunk, next, quoted) = match body.strip_prefix('"') {
            Some(inner) => match inner.find('"') {
                Some(end) => (&inner[..end], &inner[end + 1..], true),
                None => (inner, "", true),
            },
            None => {
                let end = body.find(char::is_whitespace).unwrap_or(body.len());
                (&body[..end], &body[end..], false)
            }
        };
        match chunk {
            "NOT" if !quoted => negate_next = true,
            "AND" | "OR" if !quoted => {}
            _ if chunk.chars().any(char::is_alphanumeric) => terms.push((chunk.to_owned(), negated)),
            _ => {}
        }
        rest = next.trim_start();
    }
    let n = terms.len();
    terms.truncate(SERVER_MAX_TERMS);
    let text = terms.into_iter().filter(|(_, neg)| !neg).map(|(t, _)| t).collect::<Vec<_>>().join(" ");
    ServerView { text, terms: n, chars_cut }
}

fn markdown(col: &Collection, rows: &[Row], t: &Timings, truncation: &str) -> String {
    let mut s = String::from("\n### Search quality on CISI\n\n");
    let _ = writeln!(
        s,
        "{} abstracts (title + abstract as page content), {} judged queries (title, when a query has one, \
         then text). Searches ask for {K} results. Means over all {} judged queries; a failed search counts 0.\n",
        col.docs.len(),
        col.queries.len(),
        col.queries.len()
    );
    let _ = writeln!(s, "| ranking | mode asked | server | nDCG@10 | recall@10 | MRR@10 | queries evaluated |");
    let _ = writeln!(s, "|---|---|---|---:|---:|---:|---:|");
    for r in rows {
        let m = r.mean(col);
        let failed = col.queries.len() - r.answered();
        let _ = writeln!(
            s,
            "| {} | {} | {} | {:.3} | {:.3} | {:.3} | {}{} |",
            r.label,
            if r.mode.is_empty() { "–" } else { r.mode },
            r.config,
            m.ndcg,
            m.recall,
            m.rr,
            r.answered(),
            if failed > 0 { format!(" ({failed} failed)") } else { String::new() }
        );
    }
    let _ = writeln!(s, "\n{truncation}");
    if let Some(l) = &t.load {
        let _ = writeln!(
            s,
            "\nLoading: {} pages in {:.1} s ({:.1} pages/s, create p50 {} ms; {} errors).",
            l.ok.len(),
            l.wall_secs,
            l.ok.len() as f64 / l.wall_secs,
            f2(l.pct(50.0)),
            l.errors
        );
    }
    for (config, started, wait) in &t.embed {
        let whole = match wait.outcome {
            // Only when this start had pages to embed (not after a restart that found none).
            Embedded::Done if wait.samples.first().is_some_and(|s| s.1 > 0) => format!(
                " All {} pages embedded {:.1} s after the server was up (model load included): {:.1} pages/s.",
                col.docs.len(),
                wait.secs,
                col.docs.len() as f64 / wait.secs
            ),
            _ => String::new(),
        };
        let rerank = match wait.system["rerank_engine"].as_str() {
            Some(e) => format!(" Rerank engine: {e}."),
            None => String::new(),
        };
        let _ = writeln!(
            s,
            "\nEmbedding ({config}): server started in {started:.1} s; {}.{whole}{rerank}",
            wait.describe()
        );
    }
    s
}

/// Known-item rows: the right page first (success@1) and MRR@10.
fn known_markdown(known: &Collection, rows: &[Row]) -> String {
    let mut s = format!(
        "\n### Known-item queries on CISI\n\n{} queries of a few title words (every tenth abstract's title), one \
         right page each.\n\n| ranking | mode asked | server | right page first | MRR@10 |\n|---|---|---|---:|---:|\n",
        known.queries.len()
    );
    for r in rows {
        let first = first_hits(known, r);
        let _ = writeln!(
            s,
            "| {} | {} | {} | {first} of {} | {:.3} |",
            r.label,
            r.mode,
            r.config,
            known.queries.len(),
            r.mean(known).rr
        );
    }
    s
}

/// Queries whose first answer is a relevant page.
fn first_hits(col: &Collection, r: &Row) -> usize {
    r.scores(col).iter().flatten().filter(|s| s.rr == 1.0).count()
}

fn known_json(known: &Collection, r: &Row) -> Value {
    let m = r.mean(known);
    json!({"label": r.label, "mode": r.mode, "config": r.config, "first": first_hits(known, r),
        "mrr10": m.rr, "ndcg10": m.ndcg, "answered": r.answered(), "queries": known.queries.len()})
}

fn to_json(a: &Args, col: &Collection, rows: &[Row], t: &Timings, truncation: &str) -> Value {
    let rows: Vec<Value> = rows
        .iter()
        .map(|r| {
            let m = r.mean(col);
            let per_query: Vec<Value> = r
                .scores(col)
                .iter()
                .zip(&r.ranked)
                .zip(&col.queries)
                .map(|((s, ranked), q)| match s {
                    Some(s) => {
                        json!({"query": q.id, "ndcg10": s.ndcg, "recall10": s.recall, "rr10": s.rr, "top": ranked})
                    }
                    None => json!({"query": q.id, "failed": true}),
                })
                .collect();
            json!({
                "label": r.label, "mode": r.mode, "config": r.config,
                "ndcg10": m.ndcg, "recall10": m.recall, "mrr10": m.rr,
                "answered": r.answered(), "queries": col.queries.len(),
                "latency": r.stats.as_ref().map(stats_json),
                "per_query": per_query,
            })
        })
        .collect();
    let embed: Vec<Value> = t
        .embed
        .iter()
        .map(|(config, started, w)| {
            let mut v = w.json();
            v["config"] = json!(config);
            v["server_start_secs"] = round2(*started);
            v
        })
        .collect();
    json!({
        "config": {"common": a.common.json(), "cisi": a.cisi.display().to_string(), "k": K,
            "load_concurrency": a.load_concurrency},
        "collection": {"documents": col.docs.len(), "judged_queries": col.queries.len(),
            "queries_in_file": col.queries_in_file},
        "truncation": truncation,
        "load": t.load.as_ref().map(|l| json!({"pages": l.ok.len(), "stats": stats_json(l),
            "pages_per_sec": round2(l.ok.len() as f64 / l.wall_secs)})),
        "embedding": embed,
        "rows": rows,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_view_cuts_like_the_server() {
        let v = server_view("What is \"information science\"? NOT physics AND -chemistry OR (1) -- x");
        assert_eq!(v.text, "What is information science (1) x");
        assert_eq!(v.terms, 7);
        let long: String = (0..40).map(|i| format!("w{i} ")).collect();
        let v = server_view(&long);
        assert_eq!((v.terms, v.text.split(' ').count(), v.chars_cut), (40, 32, false));
    }
}
