//! Cairn: a self-hosted, multi-user wiki and knowledge base.
//!
//! # Layout
//! - [`config`]: every setting (env and flags), validated once.
//! - [`core`]: the rules — accounts, workspaces, pages… — as plain async functions.
//! - [`http`]: the HTTP door (axum handlers + OpenAPI); [`app`] assembles and serves it.
//! - [`mcp`]: the MCP door (`POST /api/mcp`, 27 tools over the same core functions).
//! - [`auth`]: credential primitives — password hashes, secrets, JWT signing.
//! - [`store`]: the database pool and schema convergence (SQLite and PostgreSQL).
//! - [`git`]: workspace repositories; [`markdown`]: reading a page once.
//! - [`ids`]: slugs, emails, names and tags, validated once (a leaf every layer shares).
//! - [`error`]: the one error type and its catalogue of codes, rendered as problem+json.
//! - [`time`]: the clock; [`workers`]: background work beside the server.
//! - [`text`]: text as the full-text index sees it (CJK characters stand alone).
//! - [`sync`]: one way to take a lock, one value per workspace.
//! - [`zlib`]: zlib streams by a coder kept per thread (git's objects, pages' rows).
//! - [`cli`]: the `cairn` command and its sub-commands.
//! - [`testing`]: the one public module beside [`main`]: what the integration tests and the
//!   benches drive below the doors. Every other module is private to the crate.
//!
//! Arrows point down only: doors (`http`, `mcp`, `cli`) → `core` → `auth`, `git`, `markdown`,
//! `store` → `ids`, `error`, `config`, `time`, `zlib`. `docs/architecture.md` says where each
//! rule lives; `tests/it/architecture.rs` keeps the graph free of circles.

mod app;
mod auth;
mod cli;
mod config;
mod core;
mod error;
mod git;
mod http;
mod ids;
mod lockfile;
mod logging;
mod markdown;
mod mcp;
mod memory;
mod ml;
mod store;
mod sync;
pub mod testing;
mod text;
mod time;
mod workers;
mod zlib;

pub use cli::main;
