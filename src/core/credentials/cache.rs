//! Credentials already checked, kept in memory so a request costs no credential query:
//! personal access tokens (a read with a PAT is then one query, not two) and workspace
//! accesses (a save is then one hand-off to the database fewer: measured in commit 6063c4b).
//!
//! Revocation stays immediate (`DELETE /api/tokens/{id}` revokes at once;
//! a removed member gets 404 at once):
//! - every write that changes what an entry holds — a token revoked, a user's profile,
//!   password or language, a default workspace, a membership removed, a workspace
//!   renamed or deleted — calls [`CredentialCache::forget`] after it commits, which
//!   moves this process's cache to a new generation: nothing kept before is used again;
//! - with PostgreSQL, several processes may share the database: the same writes send a
//!   `NOTIFY` on [`CHANNEL`], and every process's listener ([`listen`]) forgets on it.
//!   While a process's listener is not connected its cache is not used at all (a missed
//!   notification could otherwise keep a revoked token alive);
//! - an entry is never used for more than [`TTL`], a bound for anything the two rules
//!   above could miss (a write by another tool, a process killed between its commit and
//!   its notification).
//!
//! Each kind of entry is a [`Kept`] map under one cache: tokens here, accesses in
//! `Ctx::accesses` (kept by `workspaces::access`, which this module does not know).
//! Only what was found is kept: a token that is not known, or a workspace the caller is
//! not a member of, is looked up again every time (a membership added shows at once).
//! Entries are stamped with the cache's generation read *before* the database lookup, so
//! a lookup that raced with a revocation is never kept.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::core::users::User;
use crate::time::Timestamp;

/// The PostgreSQL channel writes notify on.
pub(crate) const CHANNEL: &str = "cairn_credentials";
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
    pub last_used: Option<Timestamp>,
    /// The password generation the token is bound to, if any (`api_tokens.bound_generation`).
    pub bound: Option<i64>,
}

/// Values checked against the database, by key, kept under the rules of a
/// [`CredentialCache`]: only while it is usable, only from its current generation, never
/// past [`TTL`]. The cache keeps tokens in one; `workspaces` keeps accesses in another.
pub struct Kept<K, V> {
    map: Mutex<Stamped<K, V>>,
}

/// A map's entries, all from one generation of the cache.
struct Stamped<K, V> {
    generation: u64,
    entries: HashMap<K, (V, Instant)>,
}

impl<K: std::hash::Hash + Eq, V: Clone> Default for Kept<K, V> {
    fn default() -> Self {
        Kept { map: Mutex::new(Stamped { generation: 0, entries: HashMap::new() }) }
    }
}

impl<K: std::hash::Hash + Eq, V: Clone> Kept<K, V> {
    fn lock(&self) -> std::sync::MutexGuard<'_, Stamped<K, V>> {
        crate::sync::lock(&self.map)
    }

    /// The value kept for `key`, if it was checked since the cache's last change and not
    /// long ago.
    pub fn get<Q>(&self, cache: &CredentialCache, key: &Q) -> Option<V>
    where
        K: std::borrow::Borrow<Q>,
        Q: std::hash::Hash + Eq + ?Sized,
    {
        if !cache.usable() {
            return None;
        }
        let m = self.lock();
        if m.generation != cache.generation() {
            return None;
        }
        m.entries.get(key).filter(|(_, at)| at.elapsed() < TTL).map(|(v, _)| v.clone())
    }

    /// Keeps a value checked by a lookup that started at `generation` (read with
    /// [`CredentialCache::generation`] before the lookup); nothing if the cache changed
    /// since. A map still holding an older generation's entries starts over.
    pub fn put(&self, cache: &CredentialCache, generation: u64, key: K, value: V) {
        let mut m = self.lock();
        let now = cache.generation();
        if generation != now {
            return;
        }
        if m.generation != now || m.entries.len() >= MAX_ENTRIES {
            m.entries.clear();
            m.generation = now;
        }
        m.entries.insert(key, (value, Instant::now()));
    }

    /// Changes the value kept for `key`, if any.
    fn update<Q>(&self, key: &Q, change: impl FnOnce(&mut V))
    where
        K: std::borrow::Borrow<Q>,
        Q: std::hash::Hash + Eq + ?Sized,
    {
        if let Some((v, _)) = self.lock().entries.get_mut(key) {
            change(v);
        }
    }
}

pub struct CredentialCache {
    /// Bumped by every change: what was kept before it is not used again.
    generation: AtomicU64,
    /// Whether entries may be used: always with SQLite (one process owns the database);
    /// with PostgreSQL only while this process listens for other processes' changes.
    usable: AtomicBool,
    tokens: Kept<String, Checked>,
}

impl CredentialCache {
    pub fn new(usable: bool) -> Self {
        CredentialCache { generation: AtomicU64::new(0), usable: AtomicBool::new(usable), tokens: Kept::default() }
    }

    /// The generation to stamp a lookup with: read it before querying the database.
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::SeqCst)
    }

    /// The token with this hash, if it was checked since the last change and not long ago.
    pub fn get(&self, hash: &str) -> Option<Checked> {
        self.tokens.get(self, hash)
    }

    /// Keeps a token checked by a lookup that started at `generation`.
    pub fn put(&self, hash: String, generation: u64, checked: Checked) {
        self.tokens.put(self, generation, hash, checked);
    }

    /// Records that a token's use was written down, so it is not written again soon.
    pub fn used(&self, hash: &str, at: Timestamp) {
        self.tokens.update(hash, |c| c.last_used = Some(at));
    }

    /// Forgets every entry, of every [`Kept`] map: something they hold may have changed.
    pub fn forget(&self) {
        self.generation.fetch_add(1, Ordering::SeqCst);
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
pub(crate) async fn listen(
    cache: std::sync::Arc<CredentialCache>,
    url: String,
    mut stopped: tokio::sync::watch::Receiver<bool>,
) {
    loop {
        let Some(mut listener) = crate::store::listen::connect(&url, CHANNEL, &mut stopped).await else { return };
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_forgets_what_was_kept_and_a_lookup_that_raced_it_is_not_kept() {
        let cache = CredentialCache::new(true);
        let kept: Kept<String, u32> = Kept::default();
        let before = cache.generation();
        kept.put(&cache, before, "a".into(), 1);
        assert_eq!(kept.get(&cache, "a"), Some(1));
        cache.forget();
        assert_eq!(kept.get(&cache, "a"), None, "kept before the change");
        // Looked up before the change, answered after it: never kept.
        kept.put(&cache, before, "b".into(), 2);
        assert_eq!(kept.get(&cache, "b"), None);
        kept.put(&cache, cache.generation(), "c".into(), 3);
        assert_eq!(kept.get(&cache, "c"), Some(3));
        // A cache that may not be used (PostgreSQL without its listener) answers nothing.
        let deaf = CredentialCache::new(false);
        kept.put(&deaf, deaf.generation(), "d".into(), 4);
        assert_eq!(kept.get(&deaf, "d"), None);
    }
}
