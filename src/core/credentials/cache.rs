//! Personal access tokens already checked, kept in memory so a request with a PAT costs
//! no credential query (a read is then one query, not two).
//!
//! Revocation stays immediate (SPEC: `DELETE /api/tokens/{id}` "revokes immediately"):
//! - every write that changes what an entry holds — a token revoked, a user's profile,
//!   password or language, a default workspace — calls [`TokenCache::forget`] after it
//!   commits, which empties the cache of this process;
//! - with PostgreSQL, several processes may share the database: the same writes send a
//!   `NOTIFY` on [`CHANNEL`], and every process's listener ([`listen`]) forgets on it.
//!   While a process's listener is not connected its cache is not used at all (a missed
//!   notification could otherwise keep a revoked token alive);
//! - an entry is never used for more than [`TTL`], a bound for anything the two rules
//!   above could miss (a write by another tool, a process killed between its commit and
//!   its notification).
//!
//! Entries are stamped with the cache's generation read *before* the database lookup, so
//! a lookup that raced with a revocation is never kept.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::core::users::User;

/// The PostgreSQL channel writes notify on.
pub const CHANNEL: &str = "cairn_credentials";
/// The longest an entry is trusted.
pub const TTL: Duration = Duration::from_secs(10);
/// Entries kept at most; past it the cache starts over (tokens in use are few).
const MAX_ENTRIES: usize = 10_000;

/// A checked token: whose it is, and when its use was last recorded.
#[derive(Debug, Clone)]
pub struct Checked {
    pub user: User,
    pub token_id: i64,
    pub last_used: Option<String>,
}

struct Entry {
    checked: Checked,
    generation: u64,
    at: Instant,
}

pub struct TokenCache {
    entries: Mutex<HashMap<String, Entry>>,
    generation: AtomicU64,
    /// Whether entries may be used: always with SQLite (one process owns the database);
    /// with PostgreSQL only while this process listens for other processes' changes.
    usable: AtomicBool,
}

impl TokenCache {
    pub fn new(usable: bool) -> Self {
        TokenCache {
            entries: Mutex::new(HashMap::new()),
            generation: AtomicU64::new(0),
            usable: AtomicBool::new(usable),
        }
    }

    /// The generation to stamp a lookup with: read it before querying the database.
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::SeqCst)
    }

    /// The token with this hash, if it was checked since the last change and not long ago.
    pub fn get(&self, hash: &str) -> Option<Checked> {
        if !self.usable.load(Ordering::SeqCst) {
            return None;
        }
        let generation = self.generation();
        let entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        let e = entries.get(hash)?;
        (e.generation == generation && e.at.elapsed() < TTL).then(|| e.checked.clone())
    }

    /// Keeps a token checked by a lookup that started at `generation`.
    pub fn put(&self, hash: String, generation: u64, checked: Checked) {
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        if generation != self.generation() {
            return;
        }
        if entries.len() >= MAX_ENTRIES {
            entries.clear();
        }
        entries.insert(hash, Entry { checked, generation, at: Instant::now() });
    }

    /// Records that a token's use was written down, so it is not written again soon.
    pub fn used(&self, hash: &str, at: String) {
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(e) = entries.get_mut(hash) {
            e.checked.last_used = Some(at);
        }
    }

    /// Forgets every entry: something they hold may have changed.
    pub fn forget(&self) {
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        self.generation.fetch_add(1, Ordering::SeqCst);
        entries.clear();
    }

    /// Whether entries are used now (with PostgreSQL: while the listener is connected).
    pub fn usable(&self) -> bool {
        self.usable.load(Ordering::SeqCst)
    }

    fn set_usable(&self, usable: bool) {
        self.usable.store(usable, Ordering::SeqCst);
        self.forget();
    }
}

/// PostgreSQL: listens on [`CHANNEL`] until `stopped`, forgetting on every notification;
/// the cache is usable only while the listener is connected.
pub async fn listen(cache: std::sync::Arc<TokenCache>, url: String, mut stopped: tokio::sync::watch::Receiver<bool>) {
    use sqlx::postgres::PgListener;
    const RETRY: Duration = Duration::from_secs(1);
    loop {
        let connected = async {
            let mut l = PgListener::connect(&url).await?;
            l.listen(CHANNEL).await?;
            Ok::<_, sqlx::Error>(l)
        };
        let connected = tokio::select! {
            _ = stopped.wait_for(|s| *s) => return,
            l = connected => l,
        };
        let mut listener = match connected {
            Ok(l) => l,
            Err(e) => {
                tracing::debug!(error = %e, "credential cache: cannot listen yet");
                tokio::select! {
                    _ = stopped.wait_for(|s| *s) => return,
                    _ = tokio::time::sleep(RETRY) => continue,
                }
            }
        };
        cache.set_usable(true);
        loop {
            tokio::select! {
                _ = stopped.wait_for(|s| *s) => {
                    cache.set_usable(false);
                    return;
                }
                n = listener.try_recv() => match n {
                    Ok(Some(_)) => cache.forget(),
                    // The connection dropped: notifications may have been missed.
                    Ok(None) | Err(_) => {
                        cache.set_usable(false);
                        break;
                    }
                }
            }
        }
    }
}
