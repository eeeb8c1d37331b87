//! cairn-search-bench: search quality on a real relevance set (`quality`, the CISI
//! collection) and search latency at scale (`search-speed`, the seeded corpus of
//! cairn-bench). Both start a fresh `cairn` server as a child process, fill it over
//! the HTTP API, and measure through `GET /api/search`.

mod bm25;
mod cisi;
mod metrics;
mod quality;
mod queries;
mod search_api;
mod speed;

use std::path::PathBuf;

use anyhow::{Result, bail};
use clap::{Parser, Subcommand};
use serde_json::{Value, json};

#[derive(Parser, Debug)]
#[command(name = "cairn-search-bench", about = "Search quality and speed of Cairn (drives a server over HTTP)")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// nDCG@10, recall@10 and MRR@10 of each search mode on the CISI relevance set,
    /// beside a reference BM25 computed here.
    Quality(quality::Args),
    /// Latency of each search mode on the seeded corpus, page-save latency, and (with a
    /// model) embedding throughput, freshness and memory.
    SearchSpeed(speed::Args),
}

/// Settings both commands share: which server, which database, which models.
#[derive(clap::Args, Debug, Clone)]
pub struct Common {
    /// The cairn server binary (a release build for real runs).
    #[arg(long, env = "CAIRN_BIN", default_value = "/root/.cache/cairn-release/release/cairn")]
    pub server_bin: PathBuf,
    /// Database backend of the server: sqlite or postgres.
    #[arg(long, default_value = "sqlite")]
    pub backend: String,
    /// PostgreSQL server URL without a database (a database is created per run and dropped).
    #[arg(long, env = "BENCH_PG_URL", default_value = "postgres://postgres@127.0.0.1:5432")]
    pub pg_url: String,
    /// Sentence-embedding model directory (config.json, tokenizer.json,
    /// model.safetensors). Given, the server also runs with SEMANTIC_SEARCH=1.
    #[arg(long)]
    pub model_dir: Option<PathBuf>,
    /// Cross-encoder directory for RERANK=1 (the server's default when absent).
    #[arg(long)]
    pub rerank_model_dir: Option<PathBuf>,
    /// Longest wait for the server to embed every page.
    #[arg(long, default_value_t = 1800)]
    pub embed_timeout_secs: u64,
    /// Free text stored in the JSON, e.g. the git revision the server was built from.
    #[arg(long, default_value = "")]
    pub label: String,
    /// Keep the temporary data directory and the server's logs.
    #[arg(long)]
    pub keep: bool,
}

impl Common {
    pub fn backend(&self) -> Result<cairn_bench::server::Backend> {
        cairn_bench::server::Backend::parse(&self.backend)
    }

    pub fn check_server_bin(&self) -> Result<()> {
        if !self.server_bin.exists() {
            bail!(
                "{} not found: build it with `cargo build --release --bin cairn` (see bench/README.md)",
                self.server_bin.display()
            );
        }
        Ok(())
    }

    pub fn json(&self) -> Value {
        json!({
            "label": self.label, "server_bin": self.server_bin.display().to_string(), "backend": self.backend,
            "model_dir": self.model_dir.as_ref().map(|p| p.display().to_string()),
            "rerank_model_dir": self.rerank_model_dir.as_ref().map(|p| p.display().to_string()),
            "cpus": cairn_bench::server::ncpu(),
        })
    }
}

#[tokio::main]
async fn main() -> Result<()> {
    match Cli::parse().command {
        Command::Quality(a) => quality::run(a).await,
        Command::SearchSpeed(a) => speed::run(a).await,
    }
}
