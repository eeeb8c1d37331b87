//! Argon2id password hashes. Hashing runs on the blocking pool: it is deliberately slow
//! (~100 ms in release) and must not stall the async workers.

use argon2::password_hash::{PasswordHasher, PasswordVerifier, phc::PasswordHash};
use argon2::{Algorithm, Argon2, Params, Version};
use std::sync::OnceLock;

use crate::error::{Error, Result};

#[derive(Clone)]
pub struct Passwords {
    params: Params,
    /// A hash of a random password, verified against when the email is unknown so that
    /// both failures cost the same time.
    dummy: std::sync::Arc<OnceLock<String>>,
}

impl Passwords {
    pub fn new(memory_kib: u32, iterations: u32) -> anyhow::Result<Self> {
        let params = Params::new(memory_kib, iterations, 1, None)
            .map_err(|e| anyhow::anyhow!("invalid argon2 parameters: {e}"))?;
        Ok(Self { params, dummy: Default::default() })
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
        let this = self.clone();
        let password = password.to_owned();
        tokio::task::spawn_blocking(move || this.hash_now(&password))
            .await
            .map_err(Error::internal)?
            .map_err(Error::internal)
    }

    /// Verifies `password` against `hash`, or against a dummy hash when `hash` is None.
    pub async fn verify(&self, password: &str, hash: Option<String>) -> Result<bool> {
        let this = self.clone();
        let password = password.to_owned();
        tokio::task::spawn_blocking(move || {
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
        .map_err(Error::internal)
    }
}
