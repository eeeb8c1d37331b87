//! What the packing worker costs as a wiki's history grows.
//!
//! Builds a workspace repository directly with Cairn's own write path (`git::write_commit`,
//! no server): `--pages` pages and `--history` commits in all (the rest edits of random
//! pages), packed into one pack as `cairn gc` leaves it. Then `--passes` times: `--saves`
//! more edits, written loose, and one worker pass (`git::pack::pack`, not folding), timed.
//! At the end one `cairn gc`-style fold of everything, timed: what the worker did every
//! ninth pass under steady saving before the geometric roll-up.
//!
//! ```sh
//! $R/release/cairn-pack-bench --history 20000 --passes 40 --out F.json
//! ```

use std::path::Path;
use std::time::Instant;

use anyhow::Result;
use cairn::testing::git::{self, Author, FileChange, pack};
use clap::Parser;
use rand::seq::IndexedRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::json;

#[derive(Parser, Debug)]
#[command(name = "cairn-pack-bench", about = "Cost of the packing worker's passes as history grows")]
struct Args {
    #[arg(long, default_value_t = 1000)]
    pages: usize,
    /// Commits in the repository before the timed passes (the first `--pages` create pages).
    #[arg(long, default_value_t = 20_000)]
    history: usize,
    /// Timed worker passes.
    #[arg(long, default_value_t = 40)]
    passes: usize,
    /// Edits written loose before each pass (≈ 5 objects each; the worker's threshold is 256).
    #[arg(long, default_value_t = 60)]
    saves: usize,
    #[arg(long, default_value_t = 42)]
    seed: u64,
    #[arg(long, default_value = "pack-bench.json")]
    out: std::path::PathBuf,
}

fn main() -> Result<()> {
    let args = Args::parse();
    let dir = tempfile::tempdir()?;
    let repo_dir = dir.path().join("bench.git");
    let repo = git::open_or_init(&repo_dir)?;
    let mut rng = ChaCha8Rng::seed_from_u64(args.seed);
    let words = ["wiki", "page", "note", "team", "plan", "review", "design", "deploy", "search", "index"];
    let mut texts: Vec<String> = (0..args.pages)
        .map(|p| {
            let body: Vec<&str> = (0..400).map(|_| *words.choose(&mut rng).unwrap()).collect();
            format!("# Page {p}\n\n{}\n", body.join(" "))
        })
        .collect();
    let mut head = None;
    let mut time = 1_700_000_000;
    let mut save = |rng: &mut ChaCha8Rng, n: usize, head: &mut Option<git::Tip>| -> Result<()> {
        let p = if n < args.pages { n } else { rng.random_range(0..args.pages) };
        if n >= args.pages {
            // An edit: one word of a random line changed and a sentence appended.
            let at = rng.random_range(0..texts[p].len() / 2);
            let at = texts[p].ceil_char_boundary(at);
            texts[p].insert_str(at, words.choose(rng).unwrap());
            texts[p].push_str("Another line of notes.\n");
        }
        time += 1;
        let who = Author { name: "Bench", email: "bench@example.com", time };
        // Slugs spread over the repository's directories as a wiki's titles are (a
        // shared prefix would make one directory's tree grow with every page).
        let slug = format!("{}{}-page-{p}", char::from(b'a' + (p % 26) as u8), char::from(b'a' + (p / 26 % 26) as u8));
        let change = FileChange { path: git::live_path(&slug), content: Some(texts[p].clone().into_bytes()) };
        let mut written = Vec::new();
        let new = git::write_commit(&repo, *head, &[change], &who, &who, &format!("Save {n}\n"), &mut written)?.tip;
        git::write_ref(&repo, new.commit, head.map(|h| h.commit))?;
        *head = Some(new);
        Ok(())
    };
    let started = Instant::now();
    for n in 0..args.history {
        save(&mut rng, n, &mut head)?;
        if n % 2000 == 1999 {
            // Keep the setup's loose objects (and inodes) few.
            pack::pack(&repo_dir, false, &|| false)?;
        }
    }
    pack::pack(&repo_dir, true, &|| false)?;
    eprintln!(
        "setup: {} commits in {:.1} s, {} MiB packed",
        args.history,
        started.elapsed().as_secs_f64(),
        mib(&repo_dir)
    );

    let mut passes = Vec::new();
    for pass in 0..args.passes {
        for k in 0..args.saves {
            save(&mut rng, args.history + pass * args.saves + k, &mut head)?;
        }
        let t = Instant::now();
        let report = pack::pack(&repo_dir, false, &|| false)?;
        let ms = t.elapsed().as_secs_f64() * 1000.0;
        let packs = pack::packs(&repo_dir)?.len();
        eprintln!(
            "pass {pass:>3}: {ms:>8.1} ms, {} loose + {} packs folded → {} objects; {packs} packs",
            report.loose_packed, report.packs_folded, report.objects
        );
        passes.push(json!({"ms": ms, "loose": report.loose_packed, "folded": report.packs_folded, "objects": report.objects, "packs": packs}));
    }
    let size_before_fold = mib(&repo_dir);
    let t = Instant::now();
    let report = pack::pack(&repo_dir, true, &|| false)?;
    let fold_ms = t.elapsed().as_secs_f64() * 1000.0;
    let mut times: Vec<f64> = passes.iter().map(|p| p["ms"].as_f64().unwrap()).collect();
    times.sort_by(f64::total_cmp);
    let median = times[times.len() / 2];
    let max = times[times.len() - 1];
    eprintln!(
        "passes: median {median:.1} ms, max {max:.1} ms; {size_before_fold:.2} MiB. Full fold ({} objects): {fold_ms:.1} ms, {:.2} MiB",
        report.objects,
        mib(&repo_dir)
    );
    let out = json!({
        "args": format!("{args:?}"),
        "passes": passes,
        "pass_ms_median": median,
        "pass_ms_max": max,
        "mib_after_passes": size_before_fold,
        "full_fold_ms": fold_ms,
        "full_fold_objects": report.objects,
        "mib_after_full_fold": mib(&repo_dir),
    });
    std::fs::write(&args.out, serde_json::to_string_pretty(&out)?)?;
    Ok(())
}

/// The repository's size on disk (blocks, as `du` counts), in MiB.
fn mib(dir: &Path) -> f64 {
    fn walk(dir: &Path) -> u64 {
        use std::os::unix::fs::MetadataExt;
        std::fs::read_dir(dir)
            .map(|entries| {
                entries
                    .flatten()
                    .map(|e| {
                        e.metadata().map_or(0, |m| m.blocks() * 512 + if m.is_dir() { walk(&e.path()) } else { 0 })
                    })
                    .sum()
            })
            .unwrap_or(0)
    }
    walk(dir) as f64 / (1 << 20) as f64
}
