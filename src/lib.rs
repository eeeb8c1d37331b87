//! Cairn: a self-hosted, multi-user wiki and knowledge base.
//!
//! # Layout
//! - [`config`]: every setting (env and flags), validated once.
//! - [`core`]: the rules — accounts, workspaces, pages… — as plain async functions.
//! - [`http`]: the HTTP door (axum handlers + OpenAPI); [`app`] assembles and serves it.
//! - [`auth`]: passwords, secrets, JWTs, the login limiter, credential extractors.
//! - [`store`]: the database pool and schema convergence (SQLite and PostgreSQL).
//! - [`error`]: the one error type, rendered as problem+json.
//! - [`cli`]: the `cairn` command and its sub-commands.

pub mod app;
pub mod auth;
pub mod cli;
pub mod config;
pub mod core;
pub mod error;
pub mod git;
pub mod http;
pub mod logging;
pub mod markdown;
pub mod store;
pub mod time;

pub use core::Ctx;
pub use error::{Error, Result};
