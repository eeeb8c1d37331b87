//! The core services: every rule of Cairn lives here, behind plain async functions that
//! the three doors (HTTP, MCP, CLI) call. Nothing in here knows about HTTP.

pub mod accounts;
pub mod backup;
pub mod credentials;
pub mod export;
pub mod i18n;
pub mod import;
pub mod intel;
pub mod packing;
pub mod pages;
pub mod paging;
pub mod reindex;
pub mod search;
pub mod semantic;
pub mod system;
pub mod tokens;
pub mod uploads;
pub mod users;
pub mod webhooks;
pub mod workspaces;

use std::ops::Deref;
use std::sync::Arc;

use crate::auth::jwt::JwtKeys;
use crate::auth::password::Passwords;
use crate::config::Config;
use crate::store::Db;

pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Everything a core function needs: settings, the database, keys, the clock. Cheap to
/// clone.
#[derive(Clone)]
pub struct Ctx(Arc<CtxInner>);

pub struct CtxInner {
    pub config: Config,
    pub db: Db,
    pub jwt: JwtKeys,
    pub passwords: Passwords,
    /// Open workspace repositories and their write locks.
    pub repos: crate::git::Repos,
    /// What "now" is; tests move it instead of sleeping.
    pub clock: crate::time::Clock,
    /// In-process search indexes (TF-IDF, embeddings), caught up from the database.
    pub semantic: semantic::Indexes,
    /// The embedding model and the reranker, loaded on first use.
    pub models: semantic::models::Models,
    /// Wakes the webhook delivery worker (a save queued deliveries).
    pub webhook_wake: tokio::sync::Notify,
    /// The OCR engine for uploaded images, when `OCR_UPLOADS=1` and one is installed.
    pub ocr: uploads::ocr::Ocr,
    /// Wakes the OCR worker (an image was uploaded).
    pub ocr_wake: tokio::sync::Notify,
    /// The workspaces' write locks and their open group commits.
    pub writers: pages::batch::Slots,
    /// Tokens already checked, and the rules (generation, usability) every kept
    /// credential follows (credentials/cache.rs).
    pub credentials: Arc<credentials::cache::CredentialCache>,
    /// Workspace accesses already checked, by user id and workspace slug, kept under the
    /// credential cache's rules (`workspaces::access`).
    pub accesses: credentials::cache::Kept<(i64, String), workspaces::Access>,
    /// Ways for tests to widen race windows; inert unless a test sets them.
    pub test_hooks: TestHooks,
}

/// Delays a test can switch on to make a rare interleaving certain.
#[derive(Default)]
pub struct TestHooks {
    /// Milliseconds a page write waits after releasing its workspace lock, before it
    /// answers — where a read of "the page now" would see the next save.
    pub pause_after_write_ms: std::sync::atomic::AtomicU64,
    /// Makes the next group commit fail after moving the branch, before the database
    /// commit (the worst place): every save in it must be refused and leave nothing.
    pub fail_next_flush: std::sync::atomic::AtomicBool,
    /// Makes the index rows of the next save of this page fail half-way, after its page
    /// row was written (inside its savepoint when it shares a batch): only that save may
    /// be refused.
    pub fail_rows_of: std::sync::Mutex<Option<String>>,
    /// Makes the next save of this page panic right after its commit is made, before its
    /// rows (its objects may still be being written): a save interrupted mid-way, whose
    /// writer is dropped holding the lock.
    pub panic_after_commit_of: std::sync::Mutex<Option<String>>,
    /// Makes the objects of the next save of this page fail to be written, after its
    /// commits' ids went to its rows (which are written meanwhile): the save must leave
    /// nothing behind.
    pub fail_objects_of: std::sync::Mutex<Option<String>>,
    /// Makes the objects of the next save of this page fail as a full disk fails them
    /// (ENOSPC), at the same place: the save must answer 507 and leave nothing behind.
    pub disk_full_for: std::sync::Mutex<Option<String>>,
    /// Makes the rows of the next group of queued saves (`pages::combine`) fail after
    /// all of them were written: the group must take them back and save one by one.
    pub fail_next_group: std::sync::atomic::AtomicBool,
    /// Holds the embedding passes back while set: pages stay queued, not embedded.
    pub hold_embedding: std::sync::atomic::AtomicBool,
}

impl TestHooks {
    /// Whether the rows of a save of `slug` are to fail (once).
    pub fn rows_fail(&self, slug: &str) -> bool {
        Self::once(&self.fail_rows_of, slug)
    }

    /// Whether a save of `slug` is to panic after its commit (once).
    pub fn panics_after_commit(&self, slug: &str) -> bool {
        Self::once(&self.panic_after_commit_of, slug)
    }

    /// Whether the objects of a save of `slug` are to fail (once).
    pub fn objects_fail(&self, slug: &str) -> bool {
        Self::once(&self.fail_objects_of, slug)
    }

    /// Whether the disk is to be full for the objects of a save of `slug` (once).
    pub fn disk_full(&self, slug: &str) -> bool {
        Self::once(&self.disk_full_for, slug)
    }

    /// Whether any hook waits for a save of `slug` (a group of saves that holds one runs
    /// its saves one by one, as the hook's tests expect).
    pub fn armed(&self, slug: &str) -> bool {
        [&self.fail_rows_of, &self.panic_after_commit_of, &self.fail_objects_of, &self.disk_full_for]
            .iter()
            .any(|h| h.lock().unwrap_or_else(|p| p.into_inner()).as_deref() == Some(slug))
    }

    fn once(hook: &std::sync::Mutex<Option<String>>, slug: &str) -> bool {
        let mut hook = hook.lock().unwrap_or_else(|p| p.into_inner());
        if hook.as_deref() == Some(slug) {
            *hook = None;
            return true;
        }
        false
    }

    pub async fn after_write(&self) {
        let ms = self.pause_after_write_ms.load(std::sync::atomic::Ordering::Relaxed);
        if ms > 0 {
            tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
        }
    }
}

impl Deref for Ctx {
    type Target = CtxInner;
    fn deref(&self) -> &CtxInner {
        &self.0
    }
}

impl Ctx {
    pub fn new(config: Config, db: Db) -> anyhow::Result<Self> {
        let jwt = JwtKeys::load(config.jwt_secret.as_ref().map(|s| s.expose()), &config.data_dir)?;
        let passwords = Passwords::new(config.argon2_memory_kib, config.argon2_iterations)?;
        let models = semantic::models::Models::new(&config);
        let ocr = uploads::ocr::Ocr::detect(&config);
        // With PostgreSQL the cache waits for its listener (workers.rs): other processes
        // may revoke tokens too.
        let credentials =
            Arc::new(credentials::cache::CredentialCache::new(db.backend == crate::store::Backend::Sqlite));
        Ok(Ctx(Arc::new(CtxInner {
            credentials,
            accesses: Default::default(),
            models,
            config,
            db,
            jwt,
            passwords,
            repos: Default::default(),
            clock: Default::default(),
            semantic: Default::default(),
            webhook_wake: Default::default(),
            ocr,
            ocr_wake: Default::default(),
            writers: Default::default(),
            test_hooks: Default::default(),
        })))
    }

    /// Where a workspace's repository lives.
    pub fn workspace_dir(&self, slug: &str) -> std::path::PathBuf {
        crate::git::repo_dir(&self.config.data_dir, slug)
    }

    /// The workspace's repository (created on first use).
    pub fn repo(&self, slug: &str) -> crate::error::Result<std::sync::Arc<crate::git::WorkspaceRepo>> {
        Ok(self.repos.get(&self.workspace_dir(slug), slug)?)
    }
}
