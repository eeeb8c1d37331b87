//! What the server's markdown reading costs on pages built to be slow.
//!
//! Every save reads its page (`markdown::parse`: text, sentences, tags, headings, links;
//! `markdown::link_spans` for renames, imports and exports). A page is at most 1 MiB;
//! this times both functions on 1 MiB pages of each shape known to make markdown
//! readers slow (unclosed brackets, emphasis runs, deep nesting, embeds by the
//! thousand, …), the best of `--runs` runs each, and fails (exit 1) when any takes
//! longer than `--budget-ms`.
//!
//! ```sh
//! cargo run --release -p cairn-bench --bin cairn-markdown-bench -- --out F.json
//! ```

use std::time::{Duration, Instant};

use anyhow::Result;
use cairn::testing::markdown;
use clap::Parser;
use serde_json::json;

#[derive(Parser, Debug)]
#[command(name = "cairn-markdown-bench", about = "Cost of reading pathological 1 MiB pages")]
struct Args {
    /// Runs per page (the best is reported).
    #[arg(long, default_value_t = 3)]
    runs: usize,
    /// Exit 1 when reading any page takes longer than this (best run).
    #[arg(long, default_value_t = 1000)]
    budget_ms: u64,
    #[arg(long)]
    out: Option<std::path::PathBuf>,
}

const SIZE: usize = 1 << 20;

/// `unit` repeated up to 1 MiB.
fn fill(unit: &str) -> String {
    unit.repeat(SIZE / unit.len())
}

fn pages() -> Vec<(&'static str, String)> {
    let nested_lists: String = (0..5_000).map(|i| format!("{}- item\n", "  ".repeat(i % 200))).collect();
    let table = format!("{}|\n{}|\n", "|a".repeat(SIZE / 8), "|-".repeat(SIZE / 8));
    let long_word = "a".repeat(SIZE);
    vec![
        ("open brackets", fill("[")),
        ("open wikilinks", fill("[[")),
        ("emphasis runs", fill("*a")),
        ("mixed emphasis", fill("*_a**__")),
        ("embeds", fill("![[x]] ")),
        ("wikilinks", fill("[[page]] ")),
        ("open links", fill("[a](")),
        ("links", fill("[a](b) ")),
        ("backtick runs", (1..1400).map(|n| "`".repeat(n % 64 + 1) + "a").collect::<String>().repeat(8)),
        ("deep quotes", fill(">")),
        ("deep quotes, lines", (0..500).map(|i| format!("{} a\n", ">".repeat(i))).collect::<String>().repeat(8)),
        ("nested lists", nested_lists.repeat(SIZE / nested_lists.len().max(1))),
        ("open html", fill("<a ")),
        ("html comments", fill("<!-- ")),
        ("reference definitions", (0..40_000).map(|i| format!("[r{i}]: /x\n")).collect::<String>()),
        ("reference uses", fill("[r] [r][r] ")),
        ("wide table", table),
        ("tags", fill("#tag ")),
        ("highlights", fill("==a")),
        ("callouts", fill("> [!note] a\n")),
        ("block ids", fill("a ^id\n")),
        ("one long word", long_word),
        ("headings", fill("# a\n")),
        ("setext headings", fill("a\n=\n")),
        ("code fences", fill("```\n")),
        ("dollar signs", fill("$a$ ")),
        ("escapes", fill("\\[")),
        ("entities", fill("&amp;")),
        ("autolinks", fill("<http://a>")),
        ("sentences", fill("A word. ")),
    ]
}

fn best(runs: usize, mut f: impl FnMut()) -> Duration {
    (0..runs.max(1))
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .min()
        .unwrap_or_default()
}

fn main() -> Result<()> {
    let args = Args::parse();
    let budget = Duration::from_millis(args.budget_ms);
    let mut rows = Vec::new();
    let mut over = Vec::new();
    println!("{:<24} {:>9} {:>12} {:>12}", "page", "bytes", "parse ms", "links ms");
    for (name, page) in pages() {
        let parse = best(args.runs, || {
            std::hint::black_box(markdown::parse(&page));
        });
        let links = best(args.runs, || {
            std::hint::black_box(markdown::link_spans(&page));
        });
        println!("{name:<24} {:>9} {:>12.1} {:>12.1}", page.len(), ms(parse), ms(links));
        if parse > budget || links > budget {
            over.push(name);
        }
        rows.push(json!({"page": name, "bytes": page.len(), "parse_ms": ms(parse), "link_spans_ms": ms(links)}));
    }
    if let Some(out) = args.out {
        let report = json!({"runs": args.runs, "budget_ms": args.budget_ms, "pages": rows});
        std::fs::write(out, serde_json::to_string_pretty(&report)?)?;
    }
    if !over.is_empty() {
        anyhow::bail!("over the {} ms budget: {}", args.budget_ms, over.join(", "));
    }
    Ok(())
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}
