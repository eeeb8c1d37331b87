//! Ways for tests to widen race windows and to fail a save where no real fault can be
//! made on demand (a full disk at one precise step, a database commit that fails after
//! the branch moved, a panic half-way through a save). The core asks them at those
//! places; they are inert unless a test sets them.
//!
//! They exist only in builds with the `test-hooks` feature, which the test suites turn
//! on (Cargo.toml's dev-dependency on this crate itself). Any other build — the release
//! binary — gets a [`TestHooks`] with nothing in it, whose every answer is a constant
//! "no": no test-only path, such as the save's panic, is compiled into it.

#[cfg(feature = "test-hooks")]
pub(crate) use armed::TestHooks;
#[cfg(not(feature = "test-hooks"))]
pub(crate) use inert::TestHooks;

/// The faults a test asked of one save, read once when the save begins (each hook fires
/// for one save only): where the save is to fail or stop.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct SaveFaults {
    /// Its objects cannot be written.
    pub objects: bool,
    /// Its objects meet a full disk (ENOSPC).
    pub disk_full: bool,
    /// It panics between its commit and its rows.
    pub panic_after_commit: bool,
    /// Its rows fail half-way.
    pub rows: bool,
}

#[cfg(feature = "test-hooks")]
mod armed {
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

    /// Delays and faults a test can switch on to make a rare interleaving certain.
    #[derive(Default)]
    pub struct TestHooks {
        /// Milliseconds a page write waits after releasing its workspace lock, before it
        /// answers — where a read of "the page now" would see the next save.
        pub pause_after_write_ms: AtomicU64,
        /// Makes the next batch fail after moving the branch, before the database
        /// commit (the worst place): every save in it must be refused and leave nothing.
        pub fail_next_flush: AtomicBool,
        /// Makes the index rows of the next save of this page fail half-way, after its page
        /// row was written (inside its savepoint when it shares a batch): only that save may
        /// be refused.
        pub fail_rows_of: Mutex<Option<String>>,
        /// Makes the next save of this page panic right after its commit is made, before its
        /// rows (its objects may still be being written): a save interrupted mid-way, whose
        /// writer is dropped holding the lock.
        pub panic_after_commit_of: Mutex<Option<String>>,
        /// Makes the objects of the next save of this page fail to be written, after its
        /// commits' ids went to its rows (which are written meanwhile): the save must leave
        /// nothing behind.
        pub fail_objects_of: Mutex<Option<String>>,
        /// Makes the objects of the next save of this page fail as a full disk fails them
        /// (ENOSPC), at the same place: the save must answer 507 and leave nothing behind.
        pub disk_full_for: Mutex<Option<String>>,
        /// Makes the rows of the next group of queued saves (`pages::group`) fail after
        /// all of them were written: the group must take them back and save one by one.
        pub fail_next_group: AtomicBool,
        /// Holds the embedding passes back while set: pages stay queued, not embedded.
        pub hold_embedding: AtomicBool,
        /// Wakes the packing worker for a pass now, not at its next minute.
        pub pack_now: tokio::sync::Notify,
    }

    impl TestHooks {
        /// Whether the next batch is to fail after moving the branch (once).
        pub fn flush_fails(&self) -> bool {
            self.fail_next_flush.swap(false, Ordering::SeqCst)
        }

        /// Whether embedding passes are held back.
        pub fn embedding_held(&self) -> bool {
            self.hold_embedding.load(Ordering::SeqCst)
        }

        /// The faults asked of a save of the pages `slugs` (each hook once), `group` when
        /// it is a group of queued saves (`pages::group`).
        pub fn save_faults<'a>(&self, slugs: impl Iterator<Item = &'a str> + Clone, group: bool) -> super::SaveFaults {
            let once = |hook: &Mutex<Option<String>>| slugs.clone().any(|s| Self::once(hook, s));
            super::SaveFaults {
                objects: once(&self.fail_objects_of),
                disk_full: once(&self.disk_full_for),
                panic_after_commit: once(&self.panic_after_commit_of),
                rows: once(&self.fail_rows_of) || (group && self.fail_next_group.swap(false, Ordering::SeqCst)),
            }
        }

        /// Whether any hook waits for a save of `slug` (a group of saves that holds one runs
        /// its saves one by one, as the hook's tests expect).
        pub fn armed(&self, slug: &str) -> bool {
            [&self.fail_rows_of, &self.panic_after_commit_of, &self.fail_objects_of, &self.disk_full_for]
                .iter()
                .any(|h| crate::sync::lock(h).as_deref() == Some(slug))
        }

        fn once(hook: &Mutex<Option<String>>, slug: &str) -> bool {
            let mut hook = crate::sync::lock(hook);
            if hook.as_deref() == Some(slug) {
                *hook = None;
                return true;
            }
            false
        }

        pub async fn after_write(&self) {
            let ms = self.pause_after_write_ms.load(Ordering::Relaxed);
            if ms > 0 {
                tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
            }
        }

        /// Resolves when a test asks the packing worker for a pass now.
        pub async fn packing_requested(&self) {
            self.pack_now.notified().await
        }
    }
}

#[cfg(not(feature = "test-hooks"))]
mod inert {
    /// Hooks of a build without the `test-hooks` feature: none.
    #[derive(Default)]
    pub struct TestHooks;

    impl TestHooks {
        pub fn flush_fails(&self) -> bool {
            false
        }

        pub fn embedding_held(&self) -> bool {
            false
        }

        pub fn save_faults<'a>(
            &self,
            _slugs: impl Iterator<Item = &'a str> + Clone,
            _group: bool,
        ) -> super::SaveFaults {
            super::SaveFaults::default()
        }

        pub fn armed(&self, _slug: &str) -> bool {
            false
        }

        pub async fn after_write(&self) {}

        pub async fn packing_requested(&self) {
            std::future::pending().await
        }
    }
}
