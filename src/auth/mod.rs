//! Credentials: password hashing, secrets, JWTs, the failed-login limiter, and the
//! extractors that turn a request's credential into an [`AuthUser`].

pub mod extract;
pub mod jwt;
pub mod limiter;
pub mod password;
pub mod secrets;

pub use extract::{AuthUser, MaybeAuthUser};
