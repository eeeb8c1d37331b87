//! Every integration test of Cairn, in one binary: one link of the crate and its
//! dependencies instead of one per file. Each module is one area; `common` is the
//! harness (a real server on a random port, a fresh database of the backend named by
//! `CAIRN_TEST_BACKEND`). `scripts/test` skips `postgres_only` in the SQLite pass and
//! `sqlite_only` in the PostgreSQL pass, by name.

// A test binary has no outside: its `pub` items are the harness's, shared between modules.
#![allow(unreachable_pub)]

mod common;

mod accounts;
mod addresses;
mod api_docs;
mod architecture;
mod batches;
mod cli;
mod crash;
mod docs_tour;
mod import;
mod intel;
mod invitations;
mod live;
mod markdown_fixtures;
mod mcp;
mod mcp_interop;
mod oauth;
mod packing;
mod pages;
mod postgres_only;
mod rerank;
mod schemathesis;
mod search;
mod semantic;
mod sso;
mod switches;
mod system;
mod uploads;
mod web_app;
mod webhooks;
mod workspaces;
