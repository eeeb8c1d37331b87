//! Every setting of Cairn, from environment variables and matching flags.
//!
//! `cairn --help` is the configuration manual: each field's doc comment is its help
//! text. Values are parsed by clap; what clap cannot check (the database scheme, a
//! writable `DATA_DIR`) is checked once in [`Config::validate`], so a bad setting stops
//! start-up with one line naming it.

use std::net::IpAddr;
use std::path::PathBuf;

use clap::{Arg, ArgAction, Args, CommandFactory, FromArgMatches, Parser, Subcommand};

#[derive(Parser, Debug)]
#[command(name = "cairn", version, about = "Cairn: a self-hosted wiki and knowledge base")]
pub(crate) struct Cli {
    #[command(flatten)]
    pub config: Config,
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Subcommand, Debug, Clone)]
pub(crate) enum Command {
    /// Run the HTTP service (the default).
    Serve,
    /// Rebuild every rebuildable table from the workspace repositories.
    Reindex,
    /// Write a consistent backup to DIR: the database first, the files second.
    Backup {
        /// Directory to write the backup into (created if missing).
        dir: PathBuf,
    },
    /// Restore a backup made by `cairn backup` into an empty database and DATA_DIR.
    Restore {
        /// The backup directory.
        dir: PathBuf,
    },
    /// Pack every workspace repository now: loose objects into a pack, packs into one.
    /// (The server does this by itself in the background; see docs/operations.md.) With
    /// SQLite and no server running, also compact the database and its search index.
    Gc,
    /// Import a folder or zip of markdown files (e.g. an Obsidian vault), or a git
    /// repository with its history, into a workspace. See docs/import.md.
    Import {
        /// The workspace to import into (its slug).
        #[arg(long)]
        workspace: String,
        /// Save as this account (a member of the workspace) [default: the workspace's owner]
        #[arg(long = "as", value_name = "EMAIL")]
        as_email: Option<String>,
        /// Also write the full report, as JSON, to FILE.
        #[arg(long, value_name = "FILE")]
        report: Option<PathBuf>,
        /// Print what would be imported; write nothing.
        #[arg(long)]
        dry_run: bool,
        /// A git repository: import its files only, not its history.
        #[arg(long)]
        no_history: bool,
        /// The folder, .zip or git repository to import.
        path: PathBuf,
    },
}

/// Every setting. `Debug` is derived, so a setting added later is printed too; the two
/// that hold secrets print redacted by their types ([`DatabaseUrl`], [`Secret`]).
#[derive(Args, Clone, Debug)]
pub struct Config {
    /// Address to listen on.
    #[arg(long, env = "HOST", default_value = "127.0.0.1")]
    pub host: IpAddr,
    /// Port to listen on.
    #[arg(long, env = "PORT", default_value_t = 8080)]
    pub port: u16,
    /// Directory holding the workspace repositories and uploads.
    #[arg(long, env = "DATA_DIR", default_value = "./data")]
    pub data_dir: PathBuf,
    /// Database: sqlite://FILE (embedded) or postgres://… [default: sqlite://$DATA_DIR/cairn.db]
    #[arg(long, env = "DATABASE_URL")]
    pub database_url: Option<DatabaseUrl>,
    /// Directory for the daily-rotated log file (logs also go to stdout).
    #[arg(long, env = "LOG_DIR", default_value = "./logs")]
    pub log_dir: PathBuf,
    /// Log verbosity: trace, debug, info, warn, error, or a tracing filter string.
    #[arg(long, env = "LOG_LEVEL", default_value = "info")]
    pub log_level: String,
    /// Set to 1 to close POST /api/auth/register (answers 403).
    #[arg(long, env = "DISABLE_REGISTRATION")]
    pub disable_registration: Switch,
    /// Set to 1 to enable embedding-backed search and suggestions.
    #[arg(long, env = "SEMANTIC_SEARCH")]
    pub semantic_search: Switch,
    /// Directory of the sentence-embedding model (config.json, tokenizer.json, model.safetensors).
    #[arg(long, env = "EMBEDDING_MODEL_DIR", default_value = "./models/embedding")]
    pub embedding_model_dir: PathBuf,
    /// Set to 1 to rerank hybrid search with a cross-encoder.
    #[arg(long, env = "RERANK")]
    pub rerank: Switch,
    /// Directory of the cross-encoder reranker model.
    #[arg(long, env = "RERANK_MODEL_DIR", default_value = "./models/rerank")]
    pub rerank_model_dir: PathBuf,
    /// Set to 1 to extract text from uploaded images when an OCR engine is present.
    #[arg(long, env = "OCR_UPLOADS")]
    pub ocr_uploads: Switch,
    /// HS256 key for /api/token JWTs [default: generated once and kept in DATA_DIR]
    #[arg(long, env = "JWT_SECRET", hide_env_values = true)]
    pub jwt_secret: Option<Secret>,
    /// Set to 1 to mark the session cookie Secure (serve over HTTPS).
    #[arg(long, env = "COOKIE_SECURE")]
    pub cookie_secure: Switch,
    /// Set to 1 to take the client address from X-Forwarded-For (behind a reverse proxy).
    #[arg(long, env = "TRUST_PROXY")]
    pub trust_proxy: Switch,
    /// Largest accepted upload, in bytes.
    #[arg(long, env = "UPLOAD_MAX_BYTES", default_value_t = 10_485_760)]
    pub upload_max_bytes: u64,
    /// Failed logins allowed per (email, client address) inside the window.
    #[arg(long, env = "LOGIN_MAX_FAILURES", default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..))]
    pub login_max_failures: u32,
    /// Failed logins allowed per email from all addresses together inside the window;
    /// devices that signed in to the account before are not counted or refused.
    #[arg(long, env = "LOGIN_MAX_FAILURES_PER_ACCOUNT", default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..))]
    pub login_max_failures_per_account: u32,
    /// Failed logins allowed per client address for all emails together inside the
    /// window; devices that signed in to the email tried before are not counted or refused.
    #[arg(long, env = "LOGIN_MAX_FAILURES_PER_ADDRESS", default_value_t = 50, value_parser = clap::value_parser!(u32).range(1..))]
    pub login_max_failures_per_address: u32,
    /// Length of the failed-login window in seconds, counted from the first failure.
    #[arg(long, env = "LOGIN_WINDOW_SECS", default_value_t = 900, value_parser = clap::value_parser!(u64).range(1..))]
    pub login_window_secs: u64,
    /// Set to 1 to let webhooks target loopback and private addresses.
    #[arg(long, env = "WEBHOOK_ALLOW_PRIVATE")]
    pub webhook_allow_private: Switch,
    /// Set to 1 to keep the web app from loading images from other sites
    /// (`![](https://…)`): they then show as a placeholder with their link. By default
    /// they load, and the image's host sees the reader's address (docs/web.md).
    #[arg(long, env = "BLOCK_EXTERNAL_IMAGES")]
    pub block_external_images: Switch,
    /// Pause before a webhook's second attempt, in milliseconds; each later pause
    /// doubles (with jitter), up to WEBHOOK_RETRY_MAX_MS. Eight attempts, then `failed`.
    #[arg(long, env = "WEBHOOK_RETRY_BASE_MS", default_value_t = 60_000, value_parser = clap::value_parser!(u64).range(1..))]
    pub webhook_retry_base_ms: u64,
    /// Longest pause between two webhook attempts, in milliseconds.
    #[arg(long, env = "WEBHOOK_RETRY_MAX_MS", default_value_t = 21_600_000, value_parser = clap::value_parser!(u64).range(1..))]
    pub webhook_retry_max_ms: u64,
    /// Time one webhook attempt may take (connect, send, answer), in milliseconds.
    #[arg(long, env = "WEBHOOK_TIMEOUT_MS", default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(1..))]
    pub webhook_timeout_ms: u64,
    /// Days finished webhook deliveries and their events are kept.
    #[arg(long, env = "WEBHOOK_RETENTION_DAYS", default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..=36500))]
    pub webhook_retention_days: u64,
    /// `Host` values `/api/mcp` accepts, comma-separated (`wiki.example.com`,
    /// `10.0.0.5:8080`; an entry without a port allows any port; `*` allows every host).
    /// Default: the loopback names, plus `HOST` when it is a specific address. A request
    /// to another name is 403: the transport's defence against DNS rebinding.
    #[arg(long, env = "MCP_ALLOWED_HOSTS", value_delimiter = ',')]
    pub mcp_allowed_hosts: Vec<String>,
    /// Browser origins (`https://app.example.com`) allowed to call `/api/mcp` besides the
    /// server's own, comma-separated. A request with any other `Origin` is 403.
    #[arg(long, env = "MCP_ALLOWED_ORIGINS", value_delimiter = ',')]
    pub mcp_allowed_origins: Vec<String>,
    /// Seconds in-flight requests get to finish after SIGTERM or Ctrl-C.
    #[arg(long, env = "SHUTDOWN_GRACE_SECS", default_value_t = 10)]
    pub shutdown_grace_secs: u64,
    /// Seconds a client has to send a request's headers, and that an idle keep-alive
    /// connection stays open; a connection that sends nothing in time is closed.
    #[arg(long, env = "HEADER_TIMEOUT_SECS", default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..))]
    pub header_timeout_secs: u64,
    /// Most client connections open at once; one more is answered 503 and closed (keep
    /// it below the process's open-file limit, `ulimit -n`).
    #[arg(long, env = "MAX_CONNECTIONS", default_value_t = 512, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_connections: u32,
    /// Seconds after which a request is answered 503.
    #[arg(long, env = "REQUEST_TIMEOUT_SECS", default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..))]
    pub request_timeout_secs: u64,
    /// Most database connections in the pool.
    #[arg(long, env = "DB_MAX_CONNECTIONS", default_value_t = 16, value_parser = clap::value_parser!(u32).range(1..))]
    pub db_max_connections: u32,
    /// The address people reach Cairn at (`https://wiki.example.com`), for the addresses
    /// Cairn hands out: single sign-on's return address, invitation links, the OAuth
    /// metadata of `/api/mcp`. Default: each request's own scheme and `Host` (with
    /// `TRUST_PROXY=1`, `X-Forwarded-Proto` and `X-Forwarded-Host`).
    #[arg(long, env = "PUBLIC_URL")]
    pub public_url: Option<url::Url>,
    /// Single sign-on: the OpenID provider's issuer URL (its discovery document is
    /// `ISSUER/.well-known/openid-configuration`). Needs OIDC_CLIENT_ID. See
    /// docs/operations.md "Single sign-on".
    #[arg(long, env = "OIDC_ISSUER")]
    pub oidc_issuer: Option<url::Url>,
    /// The client id Cairn was registered under at the OpenID provider.
    #[arg(long, env = "OIDC_CLIENT_ID")]
    pub oidc_client_id: Option<String>,
    /// The client's secret at the OpenID provider (none for a public client).
    #[arg(long, env = "OIDC_CLIENT_SECRET", hide_env_values = true)]
    pub oidc_client_secret: Option<Secret>,
    /// Email domains single sign-on accepts, comma-separated (`example.com`); an
    /// account whose verified email is elsewhere is refused. Default: any.
    #[arg(long, env = "OIDC_ALLOWED_DOMAINS", value_delimiter = ',')]
    pub oidc_allowed_domains: Vec<String>,
    /// Set to 1 to sign in through the OpenID provider only: password sign-in and
    /// registration answer 403; password accounts sign in through the provider by their
    /// verified email.
    #[arg(long, env = "OIDC_ONLY")]
    pub oidc_only: Switch,
    /// The provider's name on the sign-in button ("Sign in with …") [default: the
    /// issuer's host name]
    #[arg(long, env = "OIDC_DISPLAY_NAME")]
    pub oidc_display_name: Option<String>,
    /// Argon2id memory cost in KiB for new password hashes (OWASP: 19456).
    #[arg(long, env = "ARGON2_MEMORY_KIB", default_value_t = 19_456, value_parser = clap::value_parser!(u32).range(8..))]
    pub argon2_memory_kib: u32,
    /// Argon2id iterations for new password hashes.
    #[arg(long, env = "ARGON2_ITERATIONS", default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..))]
    pub argon2_iterations: u32,
}

impl Cli {
    /// The settings and the command from `args` and the environment. Every parse goes
    /// through here: it makes each [`Switch`] field an on/off setting ([`Switch::setting`]),
    /// which the derive alone cannot (it would make a switch a required option).
    pub(crate) fn read<I, T>(args: I) -> Result<Cli, clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<std::ffi::OsString> + Clone,
    {
        let mut command = Cli::command().mut_args(Switch::setting);
        let mut matches = command.try_get_matches_from_mut(args)?;
        Cli::from_arg_matches_mut(&mut matches).map_err(|e| e.format(&mut command))
    }
}

/// An on/off setting (`DISABLE_REGISTRATION=1`, the documented spelling): `1`/`0`,
/// `true`/`false`, `yes`/`no`, `on`/`off` in any case; empty is off; anything else stops
/// start-up. Off when not set; the flag alone (`--trust-proxy`) is on, and a value needs
/// `=` (`--trust-proxy=0`), so a flag never swallows the next argument.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Switch(bool);

impl Switch {
    pub fn on(self) -> bool {
        self.0
    }

    pub fn parse(value: &str) -> Result<Switch, String> {
        match value.trim().to_ascii_lowercase().as_str() {
            "1" | "true" | "yes" | "on" => Ok(Switch(true)),
            "" | "0" | "false" | "no" | "off" => Ok(Switch(false)),
            _ => Err("use 1 or 0 (also true/false, yes/no, on/off)".into()),
        }
    }

    /// `arg` as an on/off setting when it holds a `Switch`; any other argument as it is.
    fn setting(arg: Arg) -> Arg {
        if arg.get_value_parser().type_id() != std::any::TypeId::of::<Switch>() {
            return arg;
        }
        arg.action(ArgAction::Set)
            .num_args(0..=1)
            .require_equals(true)
            .required(false)
            .default_value("0")
            .default_missing_value("1")
            .hide_default_value(true)
    }
}

impl clap::builder::ValueParserFactory for Switch {
    type Parser = fn(&str) -> Result<Switch, String>;
    fn value_parser() -> Self::Parser {
        Switch::parse
    }
}

/// Which database engine a URL names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

impl Backend {
    pub fn name(self) -> &'static str {
        match self {
            Backend::Sqlite => "sqlite",
            Backend::Postgres => "postgres",
        }
    }

    /// The engine behind a connection (for code handed a transaction, not a pool).
    pub fn of(conn: &sqlx::AnyConnection) -> Backend {
        if conn.backend_name() == "PostgreSQL" { Backend::Postgres } else { Backend::Sqlite }
    }
}

impl Config {
    /// A configuration from flags alone, ignoring the environment (used by tests and tools).
    pub fn from_args<I, T>(args: I) -> Result<Self, clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<std::ffi::OsString> + Clone,
    {
        Cli::read(args).map(|cli| cli.config)
    }

    /// `MCP_ALLOWED_HOSTS`, or its default: loopback names and `HOST` when specific.
    pub fn mcp_allowed_hosts(&self) -> Vec<String> {
        let set: Vec<String> =
            self.mcp_allowed_hosts.iter().map(|h| h.trim().to_owned()).filter(|h| !h.is_empty()).collect();
        if !set.is_empty() {
            return set;
        }
        let mut hosts: Vec<String> = ["localhost", "127.0.0.1", "::1"].map(String::from).to_vec();
        if !self.host.is_unspecified() && !self.host.is_loopback() {
            hosts.push(self.host.to_string());
        }
        hosts
    }

    pub fn database_url(&self) -> String {
        match &self.database_url {
            Some(url) => url.0.clone(),
            None => format!("sqlite://{}", self.data_dir.join("cairn.db").display()),
        }
    }

    pub fn backend(&self) -> Result<Backend, String> {
        let url = self.database_url();
        if url.starts_with("sqlite:") {
            Ok(Backend::Sqlite)
        } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            Ok(Backend::Postgres)
        } else {
            let scheme = url.split(':').next().unwrap_or_default();
            Err(format!("invalid DATABASE_URL: unknown scheme '{scheme}' (use sqlite://FILE or postgres://…)"))
        }
    }

    /// Checks what clap cannot, and prepares `DATA_DIR` and `LOG_DIR`. The error is one
    /// line naming the setting.
    pub fn validate(&self) -> Result<(), String> {
        self.backend()?;
        ensure_writable_dir(&self.data_dir, "DATA_DIR")?;
        ensure_writable_dir(&self.log_dir, "LOG_DIR")?;
        crate::logging::parse_filter(&self.log_level)
            .map_err(|e| format!("invalid LOG_LEVEL '{}': {e}", self.log_level))?;
        if let Some(secret) = &self.jwt_secret
            && secret.expose().len() < 32
        {
            return Err("invalid JWT_SECRET: use at least 32 characters".into());
        }
        self.validate_sso()?;
        Ok(())
    }
}

impl Config {
    /// Single sign-on's settings come together: an issuer needs a client id and the other
    /// way round, and `OIDC_ONLY` needs both (else nobody could sign in).
    fn validate_sso(&self) -> Result<(), String> {
        if let Some(url) = &self.public_url
            && !matches!(url.scheme(), "http" | "https")
        {
            return Err(format!("invalid PUBLIC_URL '{url}': use http:// or https://"));
        }
        match (&self.oidc_issuer, &self.oidc_client_id) {
            (Some(issuer), Some(_)) if !matches!(issuer.scheme(), "http" | "https") => {
                Err(format!("invalid OIDC_ISSUER '{issuer}': use https:// (or http:// on loopback)"))
            }
            (Some(_), None) => Err("OIDC_ISSUER needs OIDC_CLIENT_ID".into()),
            (None, Some(_)) => Err("OIDC_CLIENT_ID needs OIDC_ISSUER".into()),
            (None, None) if self.oidc_only.on() => Err("OIDC_ONLY=1 needs OIDC_ISSUER and OIDC_CLIENT_ID".into()),
            _ => Ok(()),
        }
    }

    /// Whether single sign-on is set up.
    pub fn sso(&self) -> bool {
        self.oidc_issuer.is_some() && self.oidc_client_id.is_some()
    }
}

fn ensure_writable_dir(dir: &std::path::Path, name: &str) -> Result<(), String> {
    let fail = |e: std::io::Error| format!("invalid {name} '{}': {e}", dir.display());
    std::fs::create_dir_all(dir).map_err(fail)?;
    let probe = dir.join(format!(".cairn-write-probe-{}", std::process::id()));
    std::fs::write(&probe, b"probe").map_err(fail)?;
    std::fs::remove_file(&probe).map_err(fail)?;
    Ok(())
}

/// Secrets are never printed, so a `{:?}` in a log line is safe.
/// A setting that is a secret: its value never shows in `Debug` output (logs, panics).
#[derive(Clone)]
pub struct Secret(String);

impl Secret {
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::str::FromStr for Secret {
    type Err = std::convert::Infallible;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(Secret(s.to_owned()))
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("<redacted>")
    }
}

/// `DATABASE_URL`: shown in `Debug` output without its password ([`redact_url`]).
#[derive(Clone)]
pub struct DatabaseUrl(String);

impl std::str::FromStr for DatabaseUrl {
    type Err = std::convert::Infallible;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(DatabaseUrl(s.to_owned()))
    }
}

impl std::fmt::Debug for DatabaseUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&redact_url(&self.0))
    }
}

/// `postgres://user:secret@host/db` → `postgres://user:***@host/db`.
pub(crate) fn redact_url(url: &str) -> String {
    if let Some((scheme, rest)) = url.split_once("://")
        && let Some((userinfo, host)) = rest.split_once('@')
        && let Some((user, _)) = userinfo.split_once(':')
    {
        return format!("{scheme}://{user}:***@{host}");
    }
    url.to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every setting shows in `Debug` (derived), and no secret does.
    #[test]
    fn debug_shows_every_setting_and_no_secret() {
        let cli = Cli::read([
            "cairn",
            "--database-url",
            "postgres://cairn:hunter2-db@db.example/cairn",
            "--jwt-secret",
            "a-jwt-secret-of-more-than-32-characters",
        ])
        .unwrap();
        let shown = format!("{:?}", cli.config);
        assert!(!shown.contains("hunter2-db") && !shown.contains("a-jwt-secret"), "{shown}");
        assert!(shown.contains("postgres://cairn:***@db.example/cairn"), "{shown}");
        for field in ["header_timeout_secs", "max_connections", "webhook_retention_days", "trust_proxy"] {
            assert!(shown.contains(field), "{field} missing from {shown}");
        }
    }

    /// Every on/off setting is one: off unless set, on as a bare flag, spelled any of
    /// the documented ways, refused otherwise, and never taking the next argument.
    #[test]
    fn every_switch_is_an_on_off_setting() {
        let switches: Vec<String> = Cli::command()
            .mut_args(Switch::setting)
            .get_arguments()
            .filter(|a| a.get_value_parser().type_id() == std::any::TypeId::of::<Switch>())
            .map(|a| a.get_long().unwrap().to_owned())
            .collect();
        assert_eq!(switches.len(), 9, "{switches:?}");
        let read = |args: &[&str]| Cli::read(["cairn"].iter().chain(args)).map(|c| c.config);
        let off = read(&[]).unwrap();
        assert!(!off.trust_proxy.on() && !off.cookie_secure.on() && !off.semantic_search.on());
        for flag in &switches {
            for (given, on) in [("", true), ("=1", true), ("=yes", true), ("=ON", true), ("=0", false), ("=off", false)]
            {
                let arg = format!("--{flag}{given}");
                let shown = format!("{:?}", read(&[&arg]).unwrap());
                let field = flag.replace('-', "_");
                assert!(shown.contains(&format!("{field}: Switch({on})")), "{arg}: {shown}");
            }
            assert!(read(&[&format!("--{flag}=maybe")]).is_err(), "--{flag}=maybe");
            // A bare flag does not take the next argument as its value.
            let cli = Cli::read(["cairn", &format!("--{flag}"), "reindex"]).unwrap();
            assert!(matches!(cli.command, Some(Command::Reindex)), "--{flag} reindex");
        }
    }
}
