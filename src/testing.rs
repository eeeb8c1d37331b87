//! The narrow surface the integration tests (`tests/it`) and the benches (`bench/`) reach
//! below the doors: a context and a server to drive, the passes the workers run, repairs,
//! backups, and the leaf readers they measure. Nothing else of the crate is public, so the
//! compiler reports whatever nothing uses (`unreachable_pub` keeps it so).

pub use crate::app::serve;
pub use crate::config::Config;
pub use crate::core::Ctx;
pub use crate::http::api;
pub use crate::memory::SQLITE_HEAP_BYTES;

pub mod store {
    pub use crate::store::{ConvergeReport, Db, Script, Value};
}

pub mod workers {
    pub use crate::workers::{JobReport, run_pending_jobs};
}

pub mod reindex {
    pub use crate::core::reindex::{all, repair, workspace};
}

pub mod backup {
    pub use crate::core::backup::{backup, restore};
}

pub mod packing {
    pub use crate::core::packing::{pack_all, pack_due, process, run_passes_in};
}

pub mod webhooks {
    pub use crate::core::webhooks::deliver::claim;
    pub use crate::core::webhooks::message_id;
    pub use crate::core::webhooks::sign::{key_of, signature};
}

pub mod credentials {
    pub use crate::core::credentials::cache::TTL;
    pub use crate::core::credentials::changed;
}

pub mod workspaces {
    pub use crate::core::workspaces::{Access, kept_access};
}

pub mod pages {
    pub use crate::core::pages::save::Writer;
}

pub mod semantic {
    pub use crate::core::semantic::embed::embed_pending;
    pub use crate::core::semantic::passages::passages;
    pub use crate::core::semantic::{fresh, is_built};
}

pub mod import {
    pub use crate::core::import::report::{PageAction, Report, UploadAction};
    pub use crate::core::import::{Options, import};
}

pub mod git {
    pub use crate::git::{Author, FileChange, Tip, head, live_path, open_or_init, pack, write_commit, write_ref};
}

pub mod markdown {
    pub use crate::markdown::{LinkKind, link_spans, parse};
}

pub mod ids {
    pub use crate::ids::Slug;
}

pub mod auth {
    pub use crate::auth::secrets::sha256_hex;
}

#[cfg(feature = "ml")]
pub mod ml {
    pub use crate::ml::{CrossEncoder, Encoder};
}
