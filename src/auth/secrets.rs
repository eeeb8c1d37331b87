//! Random secrets and how they are kept: only a SHA-256 digest is stored, and digests
//! are compared in constant time.

use rand::Rng;
use rand::distr::Alphanumeric;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// Prefix of personal access tokens (a neutral stand-in for a hosted service's own prefix).
pub(crate) const TOKEN_PREFIX: &str = "svc_";
/// Prefixes of OAuth access and refresh tokens (core/oauth), bound to the MCP endpoint.
pub(crate) const OAUTH_ACCESS_PREFIX: &str = "oat_";
pub(crate) const OAUTH_REFRESH_PREFIX: &str = "ort_";

/// `len` random base62 characters from the OS-seeded CSPRNG.
pub(crate) fn random_base62(len: usize) -> String {
    rand::rng().sample_iter(&Alphanumeric).take(len).map(char::from).collect()
}

/// A new personal access token: `svc_` + 40 base62 characters (≈ 238 bits).
pub(crate) fn new_personal_token() -> String {
    format!("{TOKEN_PREFIX}{}", random_base62(40))
}

/// A new session id for the cookie.
pub(crate) fn new_session_token() -> String {
    random_base62(43)
}

pub fn sha256_hex(value: &str) -> String {
    hex::encode(Sha256::digest(value.as_bytes()))
}

pub(crate) fn constant_time_eq(a: &str, b: &str) -> bool {
    a.as_bytes().ct_eq(b.as_bytes()).into()
}
