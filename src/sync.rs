//! State shared between tasks: one way to take a lock, and one value per workspace.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// Takes `m`, also after a holder panicked. Every lock taken this way guards data that
/// its holders change in one step each (insert, remove, replace), so a panic elsewhere
/// in their task never leaves it half-changed: going on is right, and refusing every
/// later caller would turn one failed request into a dead server.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// One `T` per workspace, by its slug (slugs never change), made on first use.
pub(crate) struct BySlug<T>(Mutex<HashMap<String, Arc<T>>>);

impl<T> Default for BySlug<T> {
    fn default() -> Self {
        BySlug(Mutex::new(HashMap::new()))
    }
}

impl<T: Default> BySlug<T> {
    /// The workspace's `T`, made now if it has none.
    pub(crate) fn get(&self, slug: &str) -> Arc<T> {
        lock(&self.0).entry(slug.to_owned()).or_default().clone()
    }

    /// Drops the workspace's `T` (the workspace is gone); holders keep theirs.
    pub(crate) fn forget(&self, slug: &str) {
        lock(&self.0).remove(slug);
    }
}
