//! cairn-soak: a long mixed load on one server per backend, to see that nothing fails and
//! nothing grows. N clients (16) loop for `--minutes` (10) over a mix of what people and
//! agents do — page reads, keyword searches with common words, saves, MCP calls, history,
//! new pages — while the server's resident memory is sampled every few seconds. Reports
//! per operation the errors, p50, p95 and p99; the memory after warm-up and at the end
//! (growth ≤ 10 % is the target). Then, with one client, keyword search on queries of
//! common words drawn by Zipf's law over the corpus's word counts (they match most pages,
//! the hardest keyword case) at each `--zipf-sizes` size: p50, p95 and p99.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Result, bail};
use clap::Parser;
use rand::Rng;
use rand::seq::IndexedRandom;
use reqwest::Method;
use serde_json::{Value, json};

use cairn_bench::api::sign_up;
use cairn_bench::corpus::{self, Page, rng_for};
use cairn_bench::load::{self, Req, RunOpts, Stats};
use cairn_bench::numbers::{round2, stats_json};
use cairn_bench::server::{self, Backend, Server};
use cairn_bench::setup;

#[derive(Parser, Debug)]
#[command(name = "cairn-soak", about = "A long mixed load on Cairn: errors, tail latency, memory growth")]
struct Args {
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Backends, comma-separated: sqlite, postgres.
    #[arg(long, default_value = "sqlite,postgres", value_delimiter = ',')]
    backends: Vec<String>,
    /// Pages in the workspace during the soak.
    #[arg(long, default_value_t = 1000)]
    pages: usize,
    /// Concurrent clients of the soak.
    #[arg(long, default_value_t = 16)]
    clients: usize,
    /// How long the soak runs.
    #[arg(long, default_value_t = 10.0)]
    minutes: f64,
    /// The first part of the soak, left out of the memory comparison.
    #[arg(long, default_value_t = 2.0)]
    warmup_minutes: f64,
    /// Corpus sizes of the one-client keyword runs on common words (0 for none).
    #[arg(long, default_value = "1000,10000", value_delimiter = ',')]
    zipf_sizes: Vec<usize>,
    /// Timed queries of each one-client keyword run.
    #[arg(long, default_value_t = 300)]
    zipf_queries: usize,
    /// The cairn server binary (a release build).
    #[arg(long, env = "CAIRN_BIN", default_value = "/root/.cache/cairn-release/release/cairn")]
    server_bin: PathBuf,
    #[arg(long, env = "BENCH_PG_URL", default_value = "postgres://postgres@127.0.0.1:5432")]
    pg_url: String,
    #[arg(long, default_value = "soak.json")]
    out: PathBuf,
    #[arg(long, default_value = "")]
    label: String,
}

/// What the soak mixes, with the share of requests each takes. A created page is deleted
/// (moved to the trash) right after, so the live pages stay as many as at the start:
/// memory that grows is then not the wiki growing.
const MIX: [(&str, u32); 8] = [
    ("get", 29),
    ("search", 20),
    ("update", 15),
    ("mcp", 15),
    ("history", 8),
    ("view", 7),
    ("create", 3),
    ("delete", 3),
];

#[tokio::main]
async fn main() -> Result<()> {
    let a = Args::parse();
    if !a.server_bin.exists() {
        bail!("no server binary at {}", a.server_bin.display());
    }
    let largest = a.pages.max(a.zipf_sizes.iter().copied().max().unwrap_or(0));
    let corpus = Arc::new(corpus::generate(a.seed, largest));
    let zipf = Zipf::new(&corpus);
    let mut results = Vec::new();
    for b in &a.backends {
        let backend = Backend::parse(b)?;
        let soak = soak(&a, backend, &corpus, &zipf).await?;
        let mut zipf_runs = Vec::new();
        for &size in a.zipf_sizes.iter().filter(|s| **s > 0) {
            zipf_runs.push(keyword_common_words(&a, backend, &corpus[..size], &zipf).await?);
        }
        results.push(json!({"backend": backend.name(), "soak": soak, "keyword_common_words": zipf_runs}));
        std::fs::write(&a.out, serde_json::to_string_pretty(&json!({"label": a.label, "results": results}))?)?;
    }
    Ok(())
}

async fn start(a: &Args, backend: Backend, tag: &str) -> Result<(Server, String)> {
    let server = Server::start(server::Options {
        bin: &a.server_bin,
        backend,
        tag: format!("soak-{}-{tag}", backend.name()),
        pg_url: &a.pg_url,
        keep: false,
        env: Vec::new(),
    })
    .await?;
    let token = sign_up(&server.base).await?;
    Ok((server, token))
}

async fn soak(a: &Args, backend: Backend, corpus: &Arc<Vec<Page>>, zipf: &Zipf) -> Result<Value> {
    eprintln!("\n=== soak, {}, {} pages, {} clients, {} min ===", backend.name(), a.pages, a.clients, a.minutes);
    let (server, token) = start(a, backend, "mix").await?;
    let base = server.base.clone();
    let clients = load::clients(a.clients, &token)?;
    let pages = &corpus[..a.pages];
    let made = setup::create_pages(&clients, &base, pages, 4, 900).await;
    let existing: Arc<Vec<String>> = Arc::new(made.ok.iter().map(|&i| pages[i].slug.clone()).collect());
    let rss_start = server.pid().map_or(0, server::rss_kib);
    let stop = Arc::new(AtomicBool::new(false));
    let started = Instant::now();
    let deadline = started + Duration::from_secs_f64(a.minutes * 60.0);
    let mut workers = Vec::new();
    for (w, client) in clients.iter().enumerate() {
        let (client, base, existing, stop) = (client.clone(), base.clone(), existing.clone(), stop.clone());
        let (corpus, queries) = (corpus.clone(), zipf.queries(a.seed, &format!("soak-{w}"), 5000));
        let seed = a.seed;
        workers.push(tokio::spawn(async move {
            let mut rng = rng_for(seed, "soak-worker", w as u64);
            let mut by_op: HashMap<&'static str, Stats> = HashMap::new();
            let mut k = 0usize;
            // Pages this worker created and has not deleted yet.
            let mut made: Vec<String> = Vec::new();
            while !stop.load(Ordering::Relaxed) {
                k += 1;
                let mut op = pick(&mut rng);
                if op == "delete" && made.is_empty() {
                    op = "create";
                }
                let slug = existing.choose(&mut rng).expect("pages exist").clone();
                let req = match op {
                    "get" => Req::get(format!("/api/pages/{slug}")),
                    "view" => Req::get(format!("/api/pages/{slug}/view")),
                    "history" => Req::get(format!("/api/pages/{slug}/history?limit=20")),
                    "search" => Req::get(format!("/api/search?q={}&limit=20", urlencode(&queries[k % queries.len()]))),
                    "mcp" => {
                        let (name, args) = if rng.random_bool(0.5) {
                            ("get_page", json!({"slug": slug}))
                        } else {
                            ("search", json!({"query": queries[k % queries.len()], "limit": 10}))
                        };
                        Req::post(
                            "/api/mcp",
                            json!({"jsonrpc": "2.0", "id": k, "method": "tools/call",
                                   "params": {"name": name, "arguments": args}}),
                        )
                    }
                    "update" => {
                        let i = rng.random_range(0..corpus.len().min(existing.len()));
                        let content = corpus::edit(&mut rng, &corpus[i].content);
                        Req::put(format!("/api/pages/{}", existing[i]), json!({"content": content}))
                    }
                    "delete" => Req { method: Method::DELETE, path: format!("/api/pages/{}", made.remove(0)), body: None, after: None },
                    _ => {
                        made.push(format!("soak-{w}-{k}"));
                        Req::post(
                            "/api/pages",
                            json!({"slug": format!("soak-{w}-{k}"), "content": format!("# Soak {w} {k}\n\nA page made during the soak.\n")}),
                        )
                    }
                };
                let st = by_op.entry(op).or_default();
                one(&client, &base, &req, st).await;
            }
            by_op
        }));
    }
    // Memory, every 5 s, until the deadline: all of it, and its anonymous (heap) and
    // file-backed (mapped packs and database files) parts.
    let mut rss: Vec<(f64, u64)> = Vec::new();
    let mut parts: Vec<(f64, server::RssParts)> = Vec::new();
    while Instant::now() < deadline {
        tokio::time::sleep(Duration::from_secs(5)).await;
        let t = started.elapsed().as_secs_f64();
        rss.push((t, server.pid().map_or(0, server::rss_kib)));
        parts.push((t, server.pid().map(server::rss_parts).unwrap_or_default()));
    }
    stop.store(true, Ordering::Relaxed);
    let mut all: HashMap<&'static str, Vec<Stats>> = HashMap::new();
    for w in workers {
        for (op, st) in w.await? {
            all.entry(op).or_default().push(st);
        }
    }
    let wall = started.elapsed().as_secs_f64();
    let warm = a.warmup_minutes * 60.0;
    // Memory right after warm-up, and over the last minute.
    let growth_of = |samples: Vec<(f64, u64)>| {
        let mean = |from: f64, to: f64| {
            let xs: Vec<u64> = samples.iter().filter(|(t, _)| *t >= from && *t < to).map(|(_, r)| *r).collect();
            xs.iter().sum::<u64>() as f64 / xs.len().max(1) as f64
        };
        let (after_warmup, end) = (mean(warm, warm + 60.0), mean(wall - 60.0, wall + 1.0));
        let growth = if after_warmup > 0.0 { (end - after_warmup) / after_warmup * 100.0 } else { f64::NAN };
        (after_warmup, end, growth)
    };
    let (after_warmup, end, growth) = growth_of(rss.clone());
    let (anon_warm, anon_end, anon_growth) = growth_of(parts.iter().map(|(t, p)| (*t, p.anon_kib)).collect());
    let (file_warm, file_end, file_growth) = growth_of(parts.iter().map(|(t, p)| (*t, p.file_kib)).collect());
    let mut ops = serde_json::Map::new();
    let mut errors = 0;
    print_header();
    for (op, _) in MIX {
        let parts = all.remove(op).unwrap_or_default();
        let mut st = Stats::merged(&parts.iter().collect::<Vec<_>>());
        st.wall_secs = wall;
        errors += st.errors;
        print_row(op, &st);
        ops.insert(op.to_owned(), stats_json(&st));
    }
    eprintln!(
        "errors {errors}; RSS start {:.0} MiB, after warm-up {:.0} MiB, last minute {:.0} MiB: growth {growth:.1} %",
        rss_start as f64 / 1024.0,
        after_warmup / 1024.0,
        end / 1024.0
    );
    eprintln!(
        "  of which anonymous {:.0} → {:.0} MiB ({anon_growth:.1} %), file-backed {:.0} → {:.0} MiB ({file_growth:.1} %)",
        anon_warm / 1024.0,
        anon_end / 1024.0,
        file_warm / 1024.0,
        file_end / 1024.0
    );
    Ok(json!({
        "pages": existing.len(), "clients": a.clients, "minutes": a.minutes, "errors": errors,
        "ops": ops, "rss_start_mib": round2(rss_start as f64 / 1024.0),
        "rss_after_warmup_mib": round2(after_warmup / 1024.0), "rss_last_minute_mib": round2(end / 1024.0),
        "rss_growth_percent": round2(growth),
        "rss_anon_after_warmup_mib": round2(anon_warm / 1024.0), "rss_anon_last_minute_mib": round2(anon_end / 1024.0),
        "rss_anon_growth_percent": round2(anon_growth),
        "rss_file_after_warmup_mib": round2(file_warm / 1024.0), "rss_file_last_minute_mib": round2(file_end / 1024.0),
        "rss_file_growth_percent": round2(file_growth),
        "rss_samples": rss.iter().map(|(t, r)| json!([t.round(), r / 1024])).collect::<Vec<_>>(),
        "server_problems_logged": server.logged_problems(),
    }))
}

/// One client, keyword search on common words, at one corpus size.
async fn keyword_common_words(a: &Args, backend: Backend, pages: &[Page], zipf: &Zipf) -> Result<Value> {
    eprintln!("\n=== keyword search on common words, {}, {} pages, one client ===", backend.name(), pages.len());
    let (server, token) = start(a, backend, &format!("zipf-{}", pages.len())).await?;
    let clients = load::clients(4, &token)?;
    setup::create_pages(&clients, &server.base, pages, 4, 1800).await;
    let ask = |label: &str, n: usize| -> Arc<Vec<Req>> {
        let qs = zipf.queries(a.seed, label, n);
        Arc::new(qs.iter().map(|q| Req::get(format!("/api/search?q={}&limit=20", urlencode(q)))).collect())
    };
    // The first query builds the workspace's term statistics; then a warm-up.
    load::run(
        &clients[..1],
        &server.base,
        ask("zipf-warmup", 50),
        RunOpts { workers: 1, keep_bodies: false, deadline: None },
    )
    .await;
    let st = load::run(
        &clients[..1],
        &server.base,
        ask("zipf-timed", a.zipf_queries),
        RunOpts { workers: 1, keep_bodies: false, deadline: None },
    )
    .await;
    print_header();
    print_row("search", &st);
    let mut v = stats_json(&st);
    v["pages"] = json!(pages.len());
    Ok(v)
}

fn print_header() {
    eprintln!("{:<8} {:>8} {:>6} {:>9} {:>9} {:>9}", "op", "requests", "errors", "p50 ms", "p95 ms", "p99 ms");
}

/// One line of the summary table, then the errors seen, if any.
fn print_row(op: &str, st: &Stats) {
    eprintln!(
        "{op:<8} {:>8} {:>6} {:>9.2} {:>9.2} {:>9.2}",
        st.count,
        st.errors,
        st.pct(50.0),
        st.pct(95.0),
        st.pct(99.0)
    );
    load::print_errors(st);
}

/// Sends one request and adds its outcome to `st`.
async fn one(client: &reqwest::Client, base: &str, r: &Req, st: &mut Stats) {
    let mut rb = client.request(r.method.clone(), format!("{base}{}", r.path));
    if let Some(b) = &r.body {
        rb = rb.header(reqwest::header::CONTENT_TYPE, "application/json").body(b.clone());
    }
    let t0 = Instant::now();
    let outcome = match rb.send().await {
        Ok(resp) => {
            let status = resp.status();
            match resp.text().await {
                // An MCP tool that failed answers 200 with `isError`.
                Ok(body) if status.is_success() && !(r.method == Method::POST && body.contains("\"isError\":true")) => {
                    Ok(())
                }
                Ok(body) => {
                    Err(format!("{} {} -> {status}: {}", r.method, r.path, body.chars().take(200).collect::<String>()))
                }
                Err(e) => Err(format!("{} {} -> {e}", r.method, r.path)),
            }
        }
        Err(e) => Err(format!("{} {} -> {e}", r.method, r.path)),
    };
    let ms = t0.elapsed().as_secs_f64() * 1000.0;
    st.count += 1;
    match outcome {
        Ok(()) => {
            // Kept sorted when merged (Stats::merged sorts).
            st.latencies.push(ms);
        }
        Err(e) => {
            st.errors += 1;
            if st.error_samples.len() < 5 {
                st.error_samples.push(e);
            }
        }
    }
}

fn pick(rng: &mut impl Rng) -> &'static str {
    let total: u32 = MIX.iter().map(|(_, w)| w).sum();
    let mut x = rng.random_range(0..total);
    for (op, w) in MIX {
        if x < w {
            return op;
        }
        x -= w;
    }
    MIX[0].0
}

fn urlencode(q: &str) -> String {
    q.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' => (b as char).to_string(),
            b' ' => "+".to_owned(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// The corpus's words by how often they occur, most common first, to draw queries from
/// by Zipf's law: the word of rank r with weight 1/r. Such words match most pages.
struct Zipf {
    words: Vec<String>,
    /// Cumulative weights, for drawing by rank.
    cumulative: Vec<f64>,
}

impl Zipf {
    fn new(corpus: &[Page]) -> Zipf {
        let mut counts: HashMap<String, usize> = HashMap::new();
        for p in corpus {
            for w in p.content.split(|c: char| !c.is_alphanumeric()).filter(|w| w.len() >= 3) {
                *counts.entry(w.to_lowercase()).or_default() += 1;
            }
        }
        let mut words: Vec<(String, usize)> = counts.into_iter().collect();
        words.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        words.truncate(2000);
        let mut total = 0.0;
        let cumulative = (1..=words.len())
            .map(|r| {
                total += 1.0 / r as f64;
                total
            })
            .collect();
        Zipf { words: words.into_iter().map(|(w, _)| w).collect(), cumulative }
    }

    /// `n` queries of one or two words, for the stream `label`.
    fn queries(&self, seed: u64, label: &str, n: usize) -> Vec<String> {
        let mut rng = rng_for(seed, label, n as u64);
        let total = *self.cumulative.last().unwrap_or(&1.0);
        let draw = |rng: &mut rand_chacha::ChaCha8Rng| {
            let x = rng.random_range(0.0..total);
            let r = self.cumulative.partition_point(|c| *c < x).min(self.words.len() - 1);
            self.words[r].clone()
        };
        (0..n)
            .map(|_| {
                let first = draw(&mut rng);
                if rng.random_bool(0.4) { format!("{first} {}", draw(&mut rng)) } else { first }
            })
            .collect()
    }
}
