//! `search-speed`: latency of `GET /api/search` in each mode on the seeded corpus of
//! cairn-bench, at each size, beside the latency of a page save in the same run; with
//! `--model-dir`, also how fast the server embeds pages, how soon a saved page is found
//! by semantic search, and its memory with the model loaded.
//!
//! One fresh server per size. The order within a run matters and is fixed: searches
//! first (keyword, semantic, hybrid, each with a cold first query, a warm-up, then the
//! timed queries), then saves (which give an embedding server work to do in the
//! background), then freshness.

use std::fmt::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use cairn_bench::api::{get_json, sign_up};
use cairn_bench::corpus::{self, Page, rng_for};
use cairn_bench::load::{self, Req, RunOpts, Stats, print_errors};
use cairn_bench::numbers::{f0, f2, latency_cells, round2, stats_json};
use cairn_bench::server::{self, Server, loadavg, ncpu, rss_kib};
use cairn_bench::setup;
use rand::seq::{IndexedRandom, SliceRandom};
use reqwest::Client;
use serde_json::{Value, json};

use crate::Common;
use crate::queries::{self, KINDS, Kind};
use crate::search_api::{Answer, EmbedWait, MODES, engine_label, model_env, search_path, wait_embedded};

/// Results asked of every search.
const LIMIT: usize = 10;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Seed of the corpus, the queries and the edits.
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Corpus sizes (pages), comma-separated; each gets a fresh server.
    #[arg(long, default_value = "10000", value_delimiter = ',')]
    sizes: Vec<usize>,
    /// Timed queries of each kind (1–2 words, prefix, 6–10 words) per mode.
    #[arg(long, default_value_t = 100)]
    queries: usize,
    /// Untimed queries per mode after its first (cold) query.
    #[arg(long, default_value_t = 30)]
    warmup: usize,
    /// Also run every mode's queries with this many concurrent clients.
    #[arg(long)]
    concurrency: Option<usize>,
    /// Timed page saves (PUT of an existing page, one client).
    #[arg(long, default_value_t = 200)]
    save_ops: usize,
    /// Concurrent clients while creating the corpus.
    #[arg(long, default_value_t = 4)]
    setup_concurrency: usize,
    /// Longest time spent creating one corpus; past it the run measures the pages it has.
    #[arg(long, default_value_t = 900)]
    setup_budget_secs: u64,
    /// New pages saved to time how soon semantic search finds them.
    #[arg(long, default_value_t = 10)]
    fresh_tries: usize,
    /// Longest wait for one new page to be found.
    #[arg(long, default_value_t = 60)]
    fresh_timeout_secs: u64,
    /// Write the results as JSON here (rewritten after every size).
    #[arg(long, default_value = "search-speed.json")]
    out: PathBuf,
    #[command(flatten)]
    common: Common,
}

/// One timed run of searches or saves.
struct Row {
    /// `keyword`, `semantic`, `hybrid` or `save (PUT)`.
    op: &'static str,
    engine: String,
    /// The query kind, `all kinds`, or `–` for saves.
    queries: &'static str,
    clients: usize,
    stats: Stats,
    /// Answers with no page (None where not counted).
    no_hits: Option<usize>,
    other_cpu_share: f64,
}

struct Cold {
    mode: &'static str,
    engine: String,
    ms: f64,
}

struct Fresh {
    engine: String,
    /// Milliseconds from the answer to the save until a search found the page.
    found_ms: Vec<f64>,
    timeouts: usize,
}

struct SizeResult {
    size: usize,
    setup: Stats,
    embed: Option<EmbedWait>,
    /// The wait for the pages the saves queued to be embedded again.
    drain: Option<EmbedWait>,
    rss_loaded_kib: u64,
    rss_end_kib: u64,
    cold: Vec<Cold>,
    rows: Vec<Row>,
    fresh: Fresh,
    server_log_problems: usize,
    loadavg_before: String,
    loadavg_after: String,
    wall_secs: f64,
}

pub async fn run(a: Args) -> Result<()> {
    a.common.check_server_bin()?;
    let max_size = a.sizes.iter().copied().max().context("--sizes is empty")?;
    eprintln!("generating a corpus of {max_size} pages (seed {})…", a.seed);
    let corpus = corpus::generate(a.seed, max_size);
    let mut results = Vec::new();
    for &size in &a.sizes {
        eprintln!("\n=== {} with {size} pages ===", a.common.backend);
        let r = run_one(&a, &corpus[..size]).await.with_context(|| format!("{} pages", size))?;
        print!("{}", markdown(&a, &r));
        results.push(r);
        std::fs::write(&a.out, serde_json::to_string_pretty(&to_json(&a, &results))?)?;
    }
    print!("{}", growth_markdown(&results));
    eprintln!("\nwrote {}", a.out.display());
    Ok(())
}

async fn run_one(a: &Args, corpus: &[Page]) -> Result<SizeResult> {
    let started = Instant::now();
    let loadavg_before = loadavg();
    let size = corpus.len();
    let env = match &a.common.model_dir {
        Some(dir) => model_env(dir, false, None)?,
        None => Vec::new(),
    };
    let backend = a.common.backend()?;
    let mut server = Server::start(server::Options {
        bin: &a.common.server_bin,
        backend,
        tag: format!("search-{}-{size}", backend.name()),
        pg_url: &a.common.pg_url,
        keep: a.common.keep,
        env,
    })
    .await?;
    let base = server.base.clone();
    let token = sign_up(&base).await?;
    let clients = load::clients(a.concurrency.unwrap_or(1).max(a.setup_concurrency).max(1), &token)?;
    let client = &clients[0];

    let setup = setup::create_pages(&clients, &base, corpus, a.setup_concurrency, a.setup_budget_secs).await;
    let existing = setup.ok.clone();
    if existing.len() < 10 {
        bail!("only {} pages were created; too few to measure", existing.len());
    }
    let probe = search_path("quarterly budget review", "semantic", LIMIT, None);
    let embed = match &a.common.model_dir {
        Some(_) => {
            eprintln!("waiting for the server to embed the pages…");
            let w = wait_embedded(client, &base, &probe, Duration::from_secs(a.common.embed_timeout_secs)).await?;
            eprintln!("  {}", w.describe());
            Some(w)
        }
        None => None,
    };
    let rss_loaded_kib = server.pid().map_or(0, rss_kib);

    // --- Searches ---
    let gen_q = |label: &str, kind: Kind, n: usize| queries::generate(a.seed, label, kind, corpus, &existing, n);
    let timed: Vec<(Kind, Vec<String>)> = KINDS.iter().map(|&k| (k, gen_q("timed", k, a.queries))).collect();
    let warm: Vec<String> = KINDS.iter().flat_map(|&k| gen_q("warm", k, a.warmup.div_ceil(3))).take(a.warmup).collect();
    let cold_query = gen_q("cold", Kind::Short, 1).pop().context("no query could be made")?;
    let mut mixed: Vec<String> = timed.iter().flat_map(|(_, q)| q.iter().cloned()).collect();
    mixed.shuffle(&mut rng_for(a.seed, "search-mixed", size as u64));

    let mut cold = Vec::new();
    let mut rows = Vec::new();
    for mode in MODES {
        let reqs = |qs: &[String]| -> Arc<Vec<Req>> {
            Arc::new(qs.iter().map(|q| Req::get(search_path(q, mode, LIMIT, None))).collect())
        };
        // The first query of a mode builds what it needs in the process (the TF-IDF
        // index, which semantic and hybrid share; a model): timed alone.
        let first = timed_run(&server, &clients, &base, reqs(std::slice::from_ref(&cold_query)), 1).await;
        let (first_engine, _) = answers(&first.0);
        eprintln!("  {mode:<8} first query: {:.1} ms ({first_engine})", first.0.pct(50.0));
        print_errors(&first.0);
        cold.push(Cold { mode, engine: first_engine, ms: first.0.pct(50.0) });
        if mode == "keyword" {
            // Keyword's first query starts building the workspace's term statistics in
            // the background and ranks in the database meanwhile; a semantic query waits
            // for them, so the timed keyword queries all rank the way a running server
            // does (and semantic's first query below no longer includes the build).
            let t = Instant::now();
            get_json(client, &base, &probe).await?;
            eprintln!(
                "  term statistics built (waited for by a semantic query): {:.1} ms",
                t.elapsed().as_secs_f64() * 1e3
            );
        }
        let w = timed_run(&server, &clients, &base, reqs(&warm), 1).await;
        print_errors(&w.0);

        let mut per_kind = Vec::new();
        for (kind, qs) in &timed {
            let (st, other) = timed_run(&server, &clients, &base, reqs(qs), 1).await;
            let (engine, no_hits) = answers(&st);
            log_row(mode, kind.name(), 1, &st, other);
            per_kind.push(Row {
                op: mode,
                engine,
                queries: kind.name(),
                clients: 1,
                stats: st,
                no_hits: Some(no_hits),
                other_cpu_share: other,
            });
        }
        let all = Stats::merged(&per_kind.iter().map(|r| &r.stats).collect::<Vec<_>>());
        let wall: f64 = per_kind.iter().map(|r| r.stats.wall_secs).sum();
        let other = per_kind.iter().map(|r| r.other_cpu_share * r.stats.wall_secs).sum::<f64>() / wall;
        let all_row = Row {
            op: mode,
            engine: engine_label(per_kind.iter().map(|r| r.engine.as_str())),
            queries: "all kinds",
            clients: 1,
            stats: all,
            no_hits: Some(per_kind.iter().filter_map(|r| r.no_hits).sum()),
            other_cpu_share: other,
        };
        rows.extend(per_kind);
        rows.push(all_row);
        if let Some(n) = a.concurrency {
            let (st, other) = timed_run(&server, &clients, &base, reqs(&mixed), n).await;
            let (engine, no_hits) = answers(&st);
            log_row(mode, "all kinds", n, &st, other);
            rows.push(Row {
                op: mode,
                engine,
                queries: "all kinds",
                clients: n,
                stats: st,
                no_hits: Some(no_hits),
                other_cpu_share: other,
            });
        }
    }

    // --- Saves ---
    let mut rng = rng_for(a.seed, "search-save", size as u64);
    let mut saves = |n: usize| -> Arc<Vec<Req>> {
        Arc::new(
            (0..n)
                .map(|_| {
                    let p = &corpus[*existing.choose(&mut rng).expect("pages exist")];
                    Req::put(format!("/api/pages/{}", p.slug), json!({"content": corpus::edit(&mut rng, &p.content)}))
                })
                .collect(),
        )
    };
    let warm_saves = saves(a.warmup);
    let timed_saves = saves(a.save_ops);
    print_errors(&timed_run(&server, &clients, &base, warm_saves, 1).await.0);
    let (st, other) = timed_run(&server, &clients, &base, timed_saves, 1).await;
    log_row("save", "–", 1, &st, other);
    rows.push(Row {
        op: "save (PUT)",
        engine: "–".into(),
        queries: "–",
        clients: 1,
        stats: st,
        no_hits: None,
        other_cpu_share: other,
    });

    // --- Freshness ---
    // The saves queued their pages for embedding, and a new page waits behind them: let
    // the queue drain first, so each try times a server with nothing else to embed.
    let drain = match &a.common.model_dir {
        Some(_) => {
            let w = wait_embedded(client, &base, &probe, Duration::from_secs(a.common.embed_timeout_secs)).await?;
            eprintln!("  after the saves: {}", w.describe());
            Some(w)
        }
        None => None,
    };
    let fresh = freshness(client, &base, a.fresh_tries, Duration::from_secs(a.fresh_timeout_secs)).await?;
    eprintln!(
        "  a new page is found by semantic search ({}) after {} ms (median of {}; {} timed out)",
        fresh.engine,
        f0(median(&fresh.found_ms)),
        fresh.found_ms.len(),
        fresh.timeouts
    );

    let rss_end_kib = server.pid().map_or(0, rss_kib);
    let server_log_problems = server.logged_problems();
    if server_log_problems > 0 {
        eprintln!("  the server logged {server_log_problems} warning/error lines; last lines:\n{}", server.log_tail());
    }
    server.stop();
    Ok(SizeResult {
        size,
        setup,
        embed,
        drain,
        rss_loaded_kib,
        rss_end_kib,
        cold,
        rows,
        fresh,
        server_log_problems,
        loadavg_before,
        loadavg_after: loadavg(),
        wall_secs: started.elapsed().as_secs_f64(),
    })
}

/// Runs `reqs` with `workers` clients, keeping the answers; also the share of the cores
/// other processes took meanwhile (how disturbed the figure is).
async fn timed_run(
    server: &Server,
    clients: &[Client],
    base: &str,
    reqs: Arc<Vec<Req>>,
    workers: usize,
) -> (Stats, f64) {
    let cpu0 = server.cpu_snapshot();
    let st = load::run(clients, base, reqs, RunOpts { workers, keep_bodies: true, deadline: None }).await;
    let other = server.cpu_snapshot().other_since(&cpu0) / (st.wall_secs * ncpu());
    (st, other)
}

/// The engines the answers of a run reported, and how many answers held no page.
fn answers(st: &Stats) -> (String, usize) {
    let parsed: Vec<Answer> = st.bodies.iter().filter_map(|(_, b)| Answer::parse(b).ok()).collect();
    (engine_label(parsed.iter().map(|a| a.engine.as_str())), parsed.iter().filter(|a| a.slugs.is_empty()).count())
}

fn log_row(op: &str, queries: &str, clients: usize, st: &Stats, other: f64) {
    eprintln!(
        "  {op:<8} {queries:<15} {clients:>2} clients: {} requests, {} errors, p50 {:.2} ms, p95 {:.2} ms, p99 {:.2} ms, other CPU {:.0}%",
        st.count,
        st.errors,
        st.pct(50.0),
        st.pct(95.0),
        st.pct(99.0),
        other * 100.0
    );
    print_errors(st);
}

/// Pages on topics the corpus never mentions, each with the words of its query.
const FRESH_TOPICS: [(&str, &str); 10] = [
    (
        "Sourdough starter with rye flour",
        "Feed the sourdough starter rye flour and water each morning; the levain doubles by noon.",
    ),
    (
        "Arctic tern migration",
        "Arctic terns migrate from the Arctic to the Antarctic and back, the longest migration of any bird.",
    ),
    (
        "Violin sound post adjustment",
        "A luthier moves the violin sound post a millimetre to brighten the tone of the strings.",
    ),
    (
        "Honeybee winter cluster",
        "In winter honeybees form a cluster around the queen and shiver their wing muscles for warmth.",
    ),
    ("Obsidian flint knapping", "Knapping obsidian and flint with an antler billet gives blades sharper than steel."),
    ("Tide pool anemones and crabs", "At low tide the pools hold sea anemones, hermit crabs, limpets and starfish."),
    (
        "Origami crane folding",
        "Fold the square of paper into a bird base, then narrow the neck and tail of the origami crane.",
    ),
    (
        "Rook endgame technique",
        "In a rook endgame the defending king stands in front of the pawn; the rook checks from behind.",
    ),
    (
        "Kimchi fermentation",
        "Salt the napa cabbage, rub it with chili paste, garlic and ginger, and let the kimchi ferment.",
    ),
    (
        "Typewriter ribbon restoration",
        "Re-ink the typewriter ribbon spool and clean the typebars of the old mechanical typewriter.",
    ),
];

/// How soon a new page is found by semantic search: each try saves a page on a topic of
/// its own and asks for its title's words until the page is among the results.
async fn freshness(client: &Client, base: &str, tries: usize, timeout: Duration) -> Result<Fresh> {
    let mut found_ms = Vec::new();
    let mut engines = Vec::new();
    let mut timeouts = 0;
    for k in 0..tries {
        let (title, text) = FRESH_TOPICS[k % FRESH_TOPICS.len()];
        let slug = format!("fresh-{k}");
        let r = client
            .post(format!("{base}/api/pages"))
            .json(&json!({"slug": slug, "content": format!("# {title}\n\n{text}\n")}))
            .send()
            .await?;
        if !r.status().is_success() {
            bail!("creating {slug} answered {}: {}", r.status(), r.text().await.unwrap_or_default());
        }
        let saved = Instant::now();
        let path = search_path(&title.to_lowercase(), "semantic", LIMIT, None);
        loop {
            let answer = Answer::from_json(&cairn_bench::api::get_json(client, base, &path).await?)?;
            if answer.slugs.contains(&slug) {
                found_ms.push(saved.elapsed().as_secs_f64() * 1000.0);
                engines.push(answer.engine);
                break;
            }
            if saved.elapsed() >= timeout {
                timeouts += 1;
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
    Ok(Fresh { engine: engine_label(engines.iter().map(String::as_str)), found_ms, timeouts })
}

fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

fn markdown(a: &Args, r: &SizeResult) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "\n### Search speed, {}, {} pages\n", a.common.backend, r.size);
    let _ = writeln!(
        s,
        "Setup: created {} of {} pages in {:.1} s ({:.1} pages/s; {} errors). {}Server RSS {:.1} MiB after loading{}, \
         {:.1} MiB at the end. Load average before/after: {} / {}. Run took {:.1} min.\n",
        r.setup.ok.len(),
        r.size,
        r.setup.wall_secs,
        r.setup.ok.len() as f64 / r.setup.wall_secs,
        r.setup.errors,
        r.embed.as_ref().map_or(String::new(), |w| format!("Embedding: {}. ", w.describe())),
        mib(r.rss_loaded_kib),
        if r.embed.is_some() { " and embedding" } else { "" },
        mib(r.rss_end_kib),
        r.loadavg_before,
        r.loadavg_after,
        r.wall_secs / 60.0
    );
    let _ = writeln!(s, "| mode | engine | first query ms |");
    let _ = writeln!(s, "|---|---|---:|");
    for c in &r.cold {
        let _ = writeln!(s, "| {} | {} | {} |", c.mode, c.engine, f2(c.ms));
    }
    let _ = writeln!(
        s,
        "\n| operation | engine | queries | clients | count | errors | no hits | p50 ms | p95 ms | p99 ms | mean ms | max ms | ops/s | other CPU |"
    );
    let _ = writeln!(s, "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for row in &r.rows {
        let st = &row.stats;
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {:.0}% |",
            row.op,
            row.engine,
            row.queries,
            row.clients,
            st.count,
            st.errors,
            row.no_hits.map_or("–".into(), |n| n.to_string()),
            latency_cells(st),
            row.other_cpu_share * 100.0
        );
    }
    if let Some(w) = &r.drain {
        let _ = writeln!(s, "\nEmbedding after the saves: {}.", w.describe());
    }
    let f = &r.fresh;
    let _ = writeln!(
        s,
        "\nFreshness: a newly saved page was found by semantic search ({}) after a median {} ms \
         (min {} ms, max {} ms, {} tries{}).",
        f.engine,
        f0(median(&f.found_ms)),
        f0(f.found_ms.iter().copied().fold(f64::NAN, f64::min)),
        f0(f.found_ms.iter().copied().fold(f64::NAN, f64::max)),
        f.found_ms.len() + f.timeouts,
        if f.timeouts > 0 {
            format!(", {} not found within {} s", f.timeouts, a.fresh_timeout_secs)
        } else {
            String::new()
        }
    );
    let _ = writeln!(
        s,
        "\n(first query: the mode's first search on this server, which builds in-process indexes; semantic and \
         hybrid share theirs. no hits: answers without any page. other CPU: share of the cores other processes \
         took during the run.)"
    );
    if r.server_log_problems > 0 {
        let _ = writeln!(s, "\nThe server logged {} warning/error lines during this run.", r.server_log_problems);
    }
    s
}

/// Each operation's one-client p50 and p99 at the largest size over the smallest.
fn growth_markdown(results: &[SizeResult]) -> String {
    let (Some(small), Some(large)) = (results.iter().min_by_key(|r| r.size), results.iter().max_by_key(|r| r.size))
    else {
        return String::new();
    };
    if small.size == large.size {
        return String::new();
    }
    let mut s = format!("\n### Growth with corpus size ({} → {} pages, 1 client)\n\n", small.size, large.size);
    let _ =
        writeln!(s, "| operation | queries | p50 small → large ms | p50 ratio | p99 small → large ms | p99 ratio |");
    let _ = writeln!(s, "|---|---|---:|---:|---:|---:|");
    for row in small.rows.iter().filter(|r| r.clients == 1) {
        let Some(l) = large.rows.iter().find(|x| x.op == row.op && x.queries == row.queries && x.clients == 1) else {
            continue;
        };
        let (a, b) = (&row.stats, &l.stats);
        let _ = writeln!(
            s,
            "| {} | {} | {} → {} | {}× | {} → {} | {}× |",
            row.op,
            row.queries,
            f2(a.pct(50.0)),
            f2(b.pct(50.0)),
            f2(b.pct(50.0) / a.pct(50.0)),
            f2(a.pct(99.0)),
            f2(b.pct(99.0)),
            f2(b.pct(99.0) / a.pct(99.0))
        );
    }
    s
}

fn to_json(a: &Args, results: &[SizeResult]) -> Value {
    let runs: Vec<Value> = results
        .iter()
        .map(|r| {
            json!({
                "size": r.size, "pages_created": r.setup.ok.len(),
                "setup": {"pages_per_sec": round2(r.setup.ok.len() as f64 / r.setup.wall_secs), "create": stats_json(&r.setup)},
                "embedding": r.embed.as_ref().map(EmbedWait::json),
                "embedding_after_saves": r.drain.as_ref().map(EmbedWait::json),
                "rss_kib": {"after_loading": r.rss_loaded_kib, "end": r.rss_end_kib},
                "first_query": r.cold.iter().map(|c| json!({"mode": c.mode, "engine": c.engine, "ms": round2(c.ms)})).collect::<Vec<_>>(),
                "rows": r.rows.iter().map(|row| {
                    let mut v = stats_json(&row.stats);
                    v["op"] = json!(row.op);
                    v["engine"] = json!(row.engine);
                    v["queries"] = json!(row.queries);
                    v["clients"] = json!(row.clients);
                    v["no_hits"] = json!(row.no_hits);
                    v["other_cpu_share"] = round2(row.other_cpu_share);
                    v
                }).collect::<Vec<_>>(),
                "freshness": {"engine": r.fresh.engine, "found_ms": r.fresh.found_ms.iter().map(|&x| round2(x)).collect::<Vec<_>>(),
                    "median_ms": round2(median(&r.fresh.found_ms)), "timeouts": r.fresh.timeouts},
                "server_log_problems": r.server_log_problems,
                "loadavg_before": r.loadavg_before, "loadavg_after": r.loadavg_after,
                "wall_secs": round2(r.wall_secs),
            })
        })
        .collect();
    json!({
        "config": {
            "common": a.common.json(), "seed": a.seed, "sizes": a.sizes, "queries_per_kind": a.queries,
            "warmup": a.warmup, "concurrency": a.concurrency, "save_ops": a.save_ops,
            "setup_concurrency": a.setup_concurrency, "setup_budget_secs": a.setup_budget_secs,
            "fresh_tries": a.fresh_tries, "limit": LIMIT,
        },
        "runs": runs,
    })
}
