//! Credentials already checked, kept in memory so a request costs no credential query:
//! personal access tokens (a read with a PAT is then one query, not two) and workspace
//! accesses (a save is then one hand-off to the database fewer: BENCHMARKS.md, issue 12,
//! thirty-seventh session).
//!
//! Revocation stays immediate (SPEC: `DELETE /api/tokens/{id}` "revokes immediately";
//! a removed member gets 404 at once):
//! - every write that changes what an entry holds — a token revoked, a user's profile,
//!   password or language, a default workspace, a membership removed, a workspace
//!   renamed or deleted — calls [`CredentialCache::forget`] after it commits, which
//!   empties the cache of this process;
//! - with PostgreSQL, several processes may share the database: the same writes send a
//!   `NOTIFY` on [`CHANNEL`], and every process's listener ([`listen`]) forgets on it.
//!   While a process's listener is not connected its cache is not used at all (a missed
//!   notification could otherwise keep a revoked token alive);
//! - an entry is never used for more than [`TTL`], a bound for anything the two rules
//!   above could miss (a write by another tool, a process killed between its commit and
//!   its notification).
//!
//! Only what was found is kept: a token that is not known, or a workspace the caller is
//! not a member of, is looked up again every time (a membership added shows at once).
//! Entries are stamped with the cache's generation read *before* the database lookup, so
//! a lookup that raced with a revocation is never kept.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::core::users::User;
use crate::core::workspaces::Access;

/// The PostgreSQL channel writes notify on.
pub const CHANNEL: &str = "cairn_credentials";
/// The longest an entry is trusted.
pub const TTL: Duration = Duration::from_secs(10);
/// Entries of each kind kept at most; past it that kind starts over (tokens in use, and
/// the workspaces their users work in, are few).
const MAX_ENTRIES: usize = 10_000;

/// A checked token: whose it is, and when its use was last recorded.
#[derive(Debug, Clone)]
pub struct Checked {
    pub user: User,
    pub token_id: i64,
    pub last_used: Option<String>,
}

struct Entry<T> {
    value: T,
    generation: u64,
    at: Instant,
}

/// Checked tokens by their hash; accesses by user id and workspace slug.
#[derive(Default)]
struct Entries {
    tokens: HashMap<String, Entry<Checked>>,
    accesses: HashMap<(i64, String), Entry<Access>>,
}

/// Keeps `value` unless `generation` is not the current one (see the module's doc).
fn keep<K: std::hash::Hash + Eq, T>(map: &mut HashMap<K, Entry<T>>, key: K, generation: u64, now: u64, value: T) {
    if generation != now {
        return;
    }
    if map.len() >= MAX_ENTRIES {
        map.clear();
    }
    map.insert(key, Entry { value, generation, at: Instant::now() });
}

/// The value of a current, young entry.
fn fresh<T>(e: Option<&Entry<T>>, generation: u64) -> Option<&T> {
    e.filter(|e| e.generation == generation && e.at.elapsed() < TTL).map(|e| &e.value)
}

pub struct CredentialCache {
    entries: Mutex<Entries>,
    generation: AtomicU64,
    /// Whether entries may be used: always with SQLite (one process owns the database);
    /// with PostgreSQL only while this process listens for other processes' changes.
    usable: AtomicBool,
}

impl CredentialCache {
    pub fn new(usable: bool) -> Self {
        CredentialCache {
            entries: Mutex::new(Entries::default()),
            generation: AtomicU64::new(0),
            usable: AtomicBool::new(usable),
        }
    }

    /// The generation to stamp a lookup with: read it before querying the database.
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::SeqCst)
    }

    fn entries(&self) -> std::sync::MutexGuard<'_, Entries> {
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The token with this hash, if it was checked since the last change and not long ago.
    pub fn get(&self, hash: &str) -> Option<Checked> {
        if !self.usable() {
            return None;
        }
        let generation = self.generation();
        fresh(self.entries().tokens.get(hash), generation).cloned()
    }

    /// Keeps a token checked by a lookup that started at `generation`.
    pub fn put(&self, hash: String, generation: u64, checked: Checked) {
        let mut entries = self.entries();
        keep(&mut entries.tokens, hash, generation, self.generation(), checked);
    }

    /// The user's access to workspace `slug`, if it was checked since the last change
    /// and not long ago.
    pub fn access(&self, user_id: i64, slug: &str) -> Option<Access> {
        if !self.usable() {
            return None;
        }
        let generation = self.generation();
        fresh(self.entries().accesses.get(&(user_id, slug.to_owned())), generation).cloned()
    }

    /// Keeps an access checked by a lookup that started at `generation`.
    pub fn put_access(&self, generation: u64, access: Access) {
        let mut entries = self.entries();
        let key = (access.user_id(), access.slug().to_owned());
        keep(&mut entries.accesses, key, generation, self.generation(), access);
    }

    /// Records that a token's use was written down, so it is not written again soon.
    pub fn used(&self, hash: &str, at: String) {
        if let Some(e) = self.entries().tokens.get_mut(hash) {
            e.value.last_used = Some(at);
        }
    }

    /// Forgets every entry: something they hold may have changed.
    pub fn forget(&self) {
        // Under the lock, so no lookup stamped with the old generation is kept after it.
        let mut entries = self.entries();
        self.generation.fetch_add(1, Ordering::SeqCst);
        *entries = Entries::default();
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
pub async fn listen(
    cache: std::sync::Arc<CredentialCache>,
    url: String,
    mut stopped: tokio::sync::watch::Receiver<bool>,
) {
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
