//! Logs go to a daily-rotated file in `LOG_DIR` and to the console: the server's to stdout,
//! a one-off command's (`cairn import`, `backup`…) to stderr, so that what the command
//! prints on stdout — its summary — is never mixed with them. `LOG_LEVEL` is a level
//! (`DEBUG` works too) or a full tracing filter string. Nothing here ever logs request
//! bodies, headers or cookies, so passwords and tokens cannot reach a log.

use tracing_appender::non_blocking::WorkerGuard;
use tracing_subscriber::EnvFilter;
use tracing_subscriber::fmt::writer::BoxMakeWriter;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

/// `info` → `info,sqlx=warn` (sqlx is noisy at info); a filter string is used as given.
pub(crate) fn parse_filter(level: &str) -> Result<EnvFilter, String> {
    let lower = level.trim().to_lowercase();
    let spec = match lower.as_str() {
        "trace" | "debug" | "info" | "warn" | "error" | "off" => format!("{lower},sqlx=warn,hyper=warn"),
        "warning" => "warn,sqlx=warn".to_owned(),
        _ => level.trim().to_owned(),
    };
    EnvFilter::try_new(spec).map_err(|e| e.to_string())
}

/// Lines the file writer's queue holds before it drops new ones (tracing-appender's
/// default, 128,000, is a channel allocated and touched in full at start-up: 4 MiB of an
/// idle server's ≈ 31 MiB). Lines are written as fast as they come; a burst of this many
/// is far beyond what a request or a worker logs.
const LOG_QUEUE_LINES: usize = 8_192;

/// Where console lines go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Console {
    Stdout,
    Stderr,
}

/// Installs the global subscriber. Keep the guard alive: dropping it flushes the file.
pub(crate) fn init(log_dir: &std::path::Path, level: &str, console: Console) -> anyhow::Result<WorkerGuard> {
    let appender = tracing_appender::rolling::Builder::new()
        .rotation(tracing_appender::rolling::Rotation::DAILY)
        .filename_prefix("cairn")
        .filename_suffix("log")
        .build(log_dir)?;
    let (file_writer, guard) = tracing_appender::non_blocking::NonBlockingBuilder::default()
        .buffered_lines_limit(LOG_QUEUE_LINES)
        .finish(appender);
    let filter = parse_filter(level).map_err(anyhow::Error::msg)?;
    tracing_subscriber::registry()
        .with(filter)
        .with(tracing_subscriber::fmt::layer().with_target(false).with_writer(match console {
            Console::Stdout => BoxMakeWriter::new(std::io::stdout),
            Console::Stderr => BoxMakeWriter::new(std::io::stderr),
        }))
        .with(tracing_subscriber::fmt::layer().with_target(false).with_ansi(false).with_writer(file_writer))
        .try_init()?;
    Ok(guard)
}
