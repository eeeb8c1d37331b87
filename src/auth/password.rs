//! Argon2id password hashes. Hashing runs on the blocking pool: it is deliberately slow
//! (~100 ms in release) and must not stall the async workers.
//!
//! It is also the one costly thing anyone can ask for without a credential (a login with
//! any email): each hash holds `ARGON2_MEMORY_KIB` (19 MiB) for its run, and the blocking
//! pool would run hundreds at once. So at most one hash per core runs at a time; a
//! request waits [`QUEUE_WAIT`] for its turn at most, then is answered 503 with
//! `Retry-After`. A request dropped while it waits (the client went away) never starts
//! its hash; one already running finishes, as Argon2 cannot be interrupted. Once no hash
//! runs, the memory they used is handed back to the system ([`crate::memory::trim`]).

use argon2::password_hash::{PasswordHasher, PasswordVerifier, phc::PasswordHash};
use argon2::{Algorithm, Argon2, Params, Version};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::error::{Error, Result};

#[derive(Clone)]
pub struct Passwords {
    params: Params,
    /// A hash of a random password, verified against when the email is unknown so that
    /// both failures cost the same time.
    dummy: Arc<OnceLock<String>>,
    /// One permit per hash that may run at once.
    turns: Arc<Semaphore>,
    most: usize,
}

/// How long a request waits for a hash to be free before it is answered 503.
pub(crate) const QUEUE_WAIT: Duration = Duration::from_secs(3);

impl Passwords {
    pub fn new(memory_kib: u32, iterations: u32) -> anyhow::Result<Self> {
        let params = Params::new(memory_kib, iterations, 1, None)
            .map_err(|e| anyhow::anyhow!("invalid argon2 parameters: {e}"))?;
        let most = std::thread::available_parallelism().map_or(2, usize::from);
        Ok(Self { params, dummy: Default::default(), turns: Arc::new(Semaphore::new(most)), most })
    }

    /// A turn to hash, or 503 once [`QUEUE_WAIT`] has passed without one.
    async fn turn(&self) -> Result<OwnedSemaphorePermit> {
        match tokio::time::timeout(QUEUE_WAIT, self.turns.clone().acquire_owned()).await {
            Ok(Ok(permit)) => Ok(permit),
            _ => Err(Error::busy("the server is busy", QUEUE_WAIT.as_secs())),
        }
    }

    /// Runs `work` on the blocking pool in its turn; the turn ends with the work, and the
    /// last hash of a burst hands its memory back.
    async fn in_turn<T: Send + 'static>(&self, work: impl FnOnce(&Self) -> T + Send + 'static) -> Result<T> {
        let permit = self.turn().await?;
        let this = self.clone();
        tokio::task::spawn_blocking(move || {
            let out = work(&this);
            drop(permit);
            if this.turns.available_permits() == this.most {
                crate::memory::trim();
            }
            out
        })
        .await
        .map_err(Error::internal)
    }

    fn hasher(&self) -> Argon2<'static> {
        Argon2::new(Algorithm::Argon2id, Version::V0x13, self.params.clone())
    }

    fn hash_now(&self, password: &str) -> anyhow::Result<String> {
        // A random salt is drawn from the OS by the hasher.
        let hash = self.hasher().hash_password(password.as_bytes()).map_err(|e| anyhow::anyhow!("argon2: {e}"))?;
        Ok(hash.to_string())
    }

    pub async fn hash(&self, password: &str) -> Result<String> {
        let password = password.to_owned();
        self.in_turn(move |this| this.hash_now(&password)).await?.map_err(Error::internal)
    }

    /// Verifies `password` against `hash`, or against a dummy hash when `hash` is None.
    pub async fn verify(&self, password: &str, hash: Option<String>) -> Result<bool> {
        let password = password.to_owned();
        self.in_turn(move |this| {
            let stored = match hash {
                Some(h) => h,
                None => {
                    this.dummy.get_or_init(|| this.hash_now("dummy-password-never-matches").unwrap_or_default()).clone()
                }
            };
            let Ok(parsed) = PasswordHash::new(&stored) else { return false };
            // The parameters are read from the stored hash, so old hashes keep working
            // when ARGON2_* change.
            this.hasher().verify_password(password.as_bytes(), &parsed).is_ok()
        })
        .await
    }
}
