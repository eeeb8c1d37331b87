//! What the bench binaries share: a Cairn server run as a child process ([`server`]),
//! the account every run uses ([`api`]), the deterministic corpus and its creation
//! ([`corpus`], [`setup`]), the request runner that measures latency ([`load`]), the
//! machine's own speed beside each timed run ([`probe`]), and number formatting for the
//! Markdown and JSON reports ([`numbers`]).
//!
//! `cairn-bench` (src/main.rs) measures page operations; `cairn-search-bench`
//! (src/search/) measures search quality and search speed.

pub mod api;
pub mod corpus;
pub mod load;
pub mod numbers;
pub mod probe;
pub mod server;
pub mod setup;
