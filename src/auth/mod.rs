//! Credential primitives, below the core: password hashing, random secrets and their
//! constant-time comparison, JWT signing and device cookies. No rule of Cairn lives here (the password
//! length rule is in `core::accounts`); turning a request's credential into a user is
//! `core::credentials`, and the HTTP extractor is `http::auth`.

pub(crate) mod device;
pub(crate) mod jwt;
pub(crate) mod password;
pub(crate) mod secrets;
