//! The `cairn` command: parse settings, then serve or run a sub-command. A bad setting
//! is reported in one line naming it, with exit code 2.

use std::process::ExitCode;

use crate::config::{Cli, Command, Config};
use crate::core::Ctx;
use crate::store::Db;
use crate::store::compact::DataDirLock;

pub fn main() -> ExitCode {
    crate::memory::configure();
    private_files();
    // The server's packing worker runs its passes as `cairn pack-pass DIR`
    // (core/packing/process.rs): no settings, database or log of their own.
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if let [_, sub, dir] = &args[..]
        && sub == crate::core::packing::process::SUBCOMMAND
    {
        return crate::core::packing::process::child_main(std::path::Path::new(dir));
    }
    crate::core::packing::run_passes_in(this_program());
    let cli = match Cli::read(args) {
        Ok(cli) => cli,
        Err(e) => return report_clap_error(e),
    };
    if let Err(msg) = cli.config.validate() {
        eprintln!("cairn: {msg}");
        return ExitCode::from(2);
    }
    let console = match cli.command {
        None | Some(Command::Serve) => crate::logging::Console::Stdout,
        Some(_) => crate::logging::Console::Stderr,
    };
    let _guard = match crate::logging::init(&cli.config.log_dir, &cli.config.log_level, console) {
        Ok(g) => g,
        Err(e) => {
            eprintln!("cairn: cannot start logging in LOG_DIR: {e}");
            return ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("cairn: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(run(cli.config, cli.command.unwrap_or(Command::Serve)));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!(error = format!("{e:#}"), "cairn stopped with an error");
            eprintln!("cairn: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// This binary, to run again: on Linux `/proc/self/exe`, which still names it after an
/// upgrade replaced the file on disk (the running server's packing passes then run the
/// same build as the server).
fn this_program() -> std::path::PathBuf {
    if cfg!(target_os = "linux") {
        "/proc/self/exe".into()
    } else {
        std::env::current_exe().unwrap_or_else(|_| std::env::args_os().next().unwrap_or_default().into())
    }
}

/// Help and version print as usual; a bad value prints clap's first paragraph only, which
/// names the flag and its environment variable's name (or the missing arguments).
fn report_clap_error(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
        let _ = e.print();
        return ExitCode::SUCCESS;
    }
    let text = e.render().to_string();
    // The first paragraph: one line, or a line ending in ':' and the names it lists
    // (a missing required argument: "...were not provided:  --workspace <WORKSPACE>").
    let first: Vec<&str> =
        text.lines().map(str::trim).skip_while(|l| l.is_empty()).take_while(|l| !l.is_empty()).collect();
    let first = if first.is_empty() { "invalid arguments".to_owned() } else { first.join(" ") };
    eprintln!("cairn: {}", first.trim_start_matches("error: "));
    ExitCode::from(2)
}

async fn run(config: Config, command: Command) -> anyhow::Result<()> {
    tracing::info!(version = crate::core::VERSION, ?config, "starting cairn");
    // Every command but gc holds the data directory's lock while it runs (a server for
    // its life), so that `cairn gc` compacts the database only while nothing else uses it
    // (store::compact). gc takes the lock itself, exclusively, once it has packed.
    let _in_use = match command {
        Command::Gc => None,
        _ => Some(DataDirLock::shared(&config.data_dir).await?),
    };
    let (db, _report) = Db::connect(&config).await?;
    let ctx = Ctx::new(config.clone(), db)?;
    match command {
        Command::Serve => {
            let repaired = crate::core::reindex::repair(&ctx).await?;
            if !repaired.is_empty() {
                tracing::warn!(workspaces = ?repaired, "start-up check repaired the index");
            }
            let shutdown = crate::app::shutdown_signal()?;
            let addr = std::net::SocketAddr::new(config.host, config.port);
            let listener = tokio::net::TcpListener::bind(addr)
                .await
                .map_err(|e| anyhow::anyhow!("cannot listen on {addr} (HOST/PORT): {e}"))?;
            tracing::info!(%addr, backend = ctx.db.backend.name(), "listening");
            crate::app::serve(listener, ctx, shutdown).await?;
            tracing::info!("stopped");
            Ok(())
        }
        Command::Reindex => {
            let r = crate::core::reindex::all(&ctx).await?;
            println!("reindexed {} workspaces: {} pages, {} revisions", r.workspaces, r.pages, r.revisions);
            Ok(())
        }
        Command::Backup { dir } => {
            let s = crate::core::backup::backup(&ctx, &dir).await?;
            println!("backed up {} rows and {} repositories to {}", s.rows, s.repositories, dir.display());
            Ok(())
        }
        Command::Restore { dir } => {
            let s = crate::core::backup::restore(&ctx, &dir).await?;
            let repaired = crate::core::reindex::repair(&ctx).await?;
            println!(
                "restored {} rows and {} repositories; reindexed {} workspaces written after the database dump",
                s.rows,
                s.repositories,
                repaired.len()
            );
            Ok(())
        }
        Command::Gc => {
            let done = crate::core::packing::pack_all(&ctx).await?;
            let loose: usize = done.iter().map(|(_, r)| r.loose_packed).sum();
            let folded: usize = done.iter().map(|(_, r)| r.packs_folded).sum();
            println!("packed {} workspaces: {loose} loose objects packed, {folded} packs folded", done.len());
            compact(&ctx).await
        }
        Command::Import { workspace, as_email, report, dry_run, no_history, path } => {
            crate::memory::configure_for_import();
            let opts = crate::core::import::Options { path, workspace, as_email, dry_run, history: !no_history };
            let bar = ProgressLine::new();
            let done = crate::core::import::import(&ctx, &opts, &|phase, n, total| bar.show(phase, n, total)).await?;
            bar.finish();
            if let Some(file) = report {
                let json = serde_json::to_vec_pretty(&done)?;
                std::fs::write(&file, json).map_err(|e| anyhow::anyhow!("--report {}: {e}", file.display()))?;
            }
            print!("{}", done.summary());
            let failed = done.count(crate::core::import::report::PageAction::Failed);
            if failed > 0 {
                anyhow::bail!("{failed} pages could not be saved (listed above)");
            }
            Ok(())
        }
    }
}

/// `cairn gc`'s second half: the database files compacted, when nothing else uses them.
async fn compact(ctx: &Ctx) -> anyhow::Result<()> {
    use crate::store::compact::Compaction;
    let mib = |bytes: u64| bytes as f64 / (1024.0 * 1024.0);
    match crate::store::compact::compact(&ctx.db, &ctx.config.data_dir).await? {
        Compaction::NotSqlite => {}
        Compaction::InUse => println!(
            "a server or another cairn command is using DATA_DIR: the database was not compacted \
             (stop it and run `cairn gc` again)"
        ),
        Compaction::Done(done) => println!(
            "compacted the database from {:.1} to {:.1} MiB and its search index from {:.1} to {:.1} MiB",
            mib(done.database.before),
            mib(done.database.after),
            mib(done.search.before),
            mib(done.search.after)
        ),
    }
    Ok(())
}

/// Progress on standard error: an `indicatif` bar (rate, time left) on a terminal, else a
/// plain line now and then (every 10 %), so logs of a piped run stay short.
struct ProgressLine {
    bar: Option<indicatif::ProgressBar>,
    last: std::sync::Mutex<(String, usize)>,
}

impl ProgressLine {
    fn new() -> Self {
        use std::io::IsTerminal;
        let bar = std::io::stderr().is_terminal().then(|| {
            let style = indicatif::ProgressStyle::with_template(
                "{msg:>8} [{bar:30}] {pos}/{len} ({percent}%) {per_sec}, {eta} left",
            )
            .expect("a valid template")
            .progress_chars("#>-");
            // A failed import leaves the bar where it stopped (the default on drop fills it).
            indicatif::ProgressBar::new(0).with_style(style).with_finish(indicatif::ProgressFinish::Abandon)
        });
        ProgressLine { bar, last: std::sync::Mutex::new((String::new(), usize::MAX)) }
    }

    fn show(&self, phase: &str, done: usize, total: usize) {
        let mut last = crate::sync::lock(&self.last);
        let total = total.max(1);
        let pct = done * 100 / total;
        match &self.bar {
            Some(bar) => {
                if last.0 != phase {
                    // A new phase starts its own count (and its own rate and time left).
                    bar.reset();
                    bar.set_message(phase.to_owned());
                }
                bar.set_length(total as u64);
                bar.set_position(done as u64);
            }
            None if last.0 != phase || pct / 10 > last.1 / 10 || (done == total && last.1 != pct) => {
                eprintln!("{phase}: {done}/{total} ({pct}%)");
            }
            None => {}
        }
        *last = (phase.to_owned(), pct);
    }

    fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish();
        }
    }
}

/// Everything the process creates is its user's alone: files 0600, directories 0700
/// (the database holds webhook secrets and token hashes; the repositories, every page).
/// Set before anything is opened, so children (packing passes) inherit it.
fn private_files() {
    // SAFETY: umask only sets the process's file-creation mask.
    unsafe {
        libc::umask(0o077);
    }
}
