//! The core services: every rule of Cairn lives here, behind plain async functions that
//! the three doors (HTTP, MCP, CLI) call. Nothing in here knows about HTTP.

pub(crate) mod accounts;
pub(crate) mod backup;
pub(crate) mod credentials;
pub(crate) mod export;
pub(crate) mod i18n;
pub(crate) mod import;
pub(crate) mod intel;
pub(crate) mod invitations;
pub(crate) mod live;
pub(crate) mod oauth;
pub(crate) mod packing;
pub(crate) mod pages;
pub(crate) mod paging;
pub(crate) mod reindex;
pub(crate) mod search;
pub(crate) mod semantic;
pub(crate) mod sso;
pub(crate) mod system;
pub(crate) mod test_hooks;
pub(crate) mod tokens;
pub(crate) mod uploads;
pub(crate) mod users;
pub(crate) mod webhooks;
pub(crate) mod workspaces;

use test_hooks::TestHooks;

use std::ops::Deref;
use std::sync::Arc;

use crate::auth::device::DeviceKey;
use crate::auth::jwt::{self, JwtKeys};
use crate::auth::password::Passwords;
use crate::config::Config;
use crate::store::Db;

pub(crate) const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Everything a core function needs: settings, the database, keys, the clock. Cheap to
/// clone.
#[derive(Clone)]
pub struct Ctx(Arc<CtxInner>);

pub struct CtxInner {
    pub config: Config,
    pub db: Db,
    pub jwt: JwtKeys,
    /// Signs the device cookies that spare an account's own devices from the login
    /// ceilings across addresses.
    pub devices: DeviceKey,
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
    /// The workspaces' write locks and their open batches.
    pub writers: pages::batch::Slots,
    /// Creates and edits queued on each workspace's lock (`pages::group`).
    pub queued: pages::group::Queues,
    /// Tokens already checked, and the rules (generation, usability) every kept
    /// credential follows (credentials/cache.rs).
    pub credentials: Arc<credentials::cache::CredentialCache>,
    /// Workspace accesses already checked, by user id and workspace slug, kept under the
    /// credential cache's rules (`workspaces::access`).
    pub accesses: credentials::cache::Kept<(i64, String), workspaces::Access>,
    /// Ways for tests to widen race windows and fail a save on demand (`test_hooks`: only
    /// in builds with the `test-hooks` feature, which the test suites turn on).
    pub test_hooks: TestHooks,
    /// The open co-editing sessions (`live`).
    pub live: live::Sessions,
    /// The OpenID provider people sign in through, when single sign-on is set up.
    pub(crate) sso: Option<sso::provider::Provider>,
}

impl Deref for Ctx {
    type Target = CtxInner;
    fn deref(&self) -> &CtxInner {
        &self.0
    }
}

impl Ctx {
    pub fn new(config: Config, db: Db) -> anyhow::Result<Self> {
        let secret = jwt::server_secret(config.jwt_secret.as_ref().map(|s| s.expose()), &config.data_dir)?;
        let jwt = JwtKeys::new(secret.as_bytes());
        let devices = DeviceKey::derive(secret.as_bytes());
        let passwords = Passwords::new(config.argon2_memory_kib, config.argon2_iterations)?;
        let models = semantic::models::Models::new(&config);
        let ocr = uploads::ocr::Ocr::detect(&config);
        let sso = sso::provider::Provider::from_config(&config)?;
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
            devices,
            passwords,
            repos: Default::default(),
            clock: Default::default(),
            semantic: Default::default(),
            webhook_wake: Default::default(),
            ocr,
            ocr_wake: Default::default(),
            writers: Default::default(),
            queued: Default::default(),
            test_hooks: Default::default(),
            live: Default::default(),
            sso,
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
