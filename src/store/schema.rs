//! Schema convergence: an older release started over a newer schema keeps working.
//!
//! At start-up the database is brought to this release's shape: missing tables,
//! columns and indexes are created; nothing is ever dropped, so an older release
//! starts over a newer schema and simply ignores what it does not know. Columns added
//! after a table's first release must be nullable or carry a default.
//!
//! The one exception is derived search state. PostgreSQL's `tsvector` column has a
//! fingerprint — the SHA-256 of its DDL — kept in `schema_meta`; it is rebuilt only when
//! the fingerprint differs from what this release would create: created empty, with
//! every page marked for the start-up check to index again from its file. SQLite's lives
//! in a file of its own with its own fingerprint (`search_file.rs`); the FTS5 table and
//! trigger that older releases kept in the database are dropped (an older release
//! started again makes them again, and indexes every page).

use anyhow::Context;
use sha2::{Digest, Sha256};
use sqlx::{AnyConnection, AssertSqlSafe, Connection, Row};

use super::Backend;

/// What one convergence changed. Empty means the database already had this shape.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ConvergeReport {
    pub created_tables: Vec<String>,
    pub added_columns: Vec<String>,
    pub created_search: Vec<String>,
    pub rebuilt_search: Vec<String>,
}

impl ConvergeReport {
    /// Says what changed, once the search state is known too (`Db::connect`).
    pub fn log(&self) {
        for t in &self.created_tables {
            tracing::info!(table = %t, "schema: created table");
        }
        for c in &self.added_columns {
            tracing::info!(column = %c, "schema: added column");
        }
        for s in &self.rebuilt_search {
            tracing::warn!(search = %s, "schema: search expression changed; rebuilt search index");
        }
    }

    pub fn is_empty(&self) -> bool {
        self.created_tables.is_empty()
            && self.added_columns.is_empty()
            && self.created_search.is_empty()
            && self.rebuilt_search.is_empty()
    }
}

struct Table {
    name: &'static str,
    /// (column, definition). `{id}` and `{blob}` are replaced per backend.
    columns: &'static [(&'static str, &'static str)],
    constraints: &'static [&'static str],
}

const TABLES: &[Table] = &[
    Table {
        name: "schema_meta",
        columns: &[("key", "TEXT NOT NULL PRIMARY KEY"), ("value", "TEXT NOT NULL")],
        constraints: &[],
    },
    Table {
        name: "users",
        columns: &[
            ("id", "{id}"),
            ("email", "TEXT NOT NULL"),
            ("name", "TEXT NOT NULL"),
            ("password_hash", "TEXT NOT NULL"),
            ("language", "TEXT NOT NULL DEFAULT 'en'"),
            ("default_workspace_id", "BIGINT"),
            // Credentials (sessions, JWTs) issued before this unix second are void:
            // bumped by a password change.
            ("credentials_since", "BIGINT NOT NULL DEFAULT 0"),
            // Counts password changes: a JWT carries the count it was issued under and is
            // void once it moves (whole seconds cannot order a change and a JWT minted in
            // the same second).
            ("credential_generation", "BIGINT NOT NULL DEFAULT 0"),
            ("created_at", "TEXT NOT NULL"),
        ],
        constraints: &["CONSTRAINT users_email_key UNIQUE (email)"],
    },
    Table {
        name: "sessions",
        columns: &[
            ("id", "{id}"),
            ("user_id", "BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE"),
            ("token_hash", "TEXT NOT NULL"),
            ("created_at", "TEXT NOT NULL"),
            ("expires_at", "BIGINT NOT NULL"),
        ],
        constraints: &["CONSTRAINT sessions_token_hash_key UNIQUE (token_hash)"],
    },
    Table {
        name: "api_tokens",
        columns: &[
            ("id", "{id}"),
            ("user_id", "BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE"),
            ("name", "TEXT NOT NULL"),
            ("token_hash", "TEXT NOT NULL"),
            ("created_at", "TEXT NOT NULL"),
            ("last_used_at", "TEXT"),
            // The user's `credential_generation` when the token was made with a JWT (or
            // with a token so bound): it then ends with the next password change, as
            // that JWT does, so a stolen JWT cannot mint a token that outlives it. NULL
            // for a token made in a signed-in session, which lasts until revoked.
            ("bound_generation", "BIGINT"),
        ],
        constraints: &["CONSTRAINT api_tokens_token_hash_key UNIQUE (token_hash)"],
    },
    Table {
        name: "login_failures",
        columns: &[
            ("email", "TEXT NOT NULL"),
            ("client", "TEXT NOT NULL"),
            ("failures", "BIGINT NOT NULL"),
            ("first_failure_at", "BIGINT NOT NULL"),
        ],
        constraints: &["PRIMARY KEY (email, client)"],
    },
    Table {
        name: "workspaces",
        columns: &[
            ("id", "{id}"),
            ("slug", "TEXT NOT NULL"),
            ("name", "TEXT NOT NULL"),
            ("created_at", "TEXT NOT NULL"),
            ("created_by", "BIGINT"),
        ],
        constraints: &["CONSTRAINT workspaces_slug_key UNIQUE (slug)"],
    },
    Table {
        name: "memberships",
        columns: &[
            ("workspace_id", "BIGINT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE"),
            ("user_id", "BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE"),
            ("role", "TEXT NOT NULL"),
            ("created_at", "TEXT NOT NULL"),
        ],
        constraints: &["PRIMARY KEY (workspace_id, user_id)"],
    },
    Table {
        name: "pages",
        columns: &[
            ("id", "{id}"),
            ("workspace_id", "BIGINT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE"),
            // Stable page id kept in the commit trailers; survives renames and reindex.
            ("uid", "TEXT"),
            ("slug", "TEXT NOT NULL"),
            ("title", "TEXT NOT NULL"),
            ("content", "TEXT NOT NULL"),
            ("path", "TEXT"),
            // No longer written ('' since the full-text index stopped reading it; columns
            // are never dropped). The search text is derived from `content` and
            // `image_text` (`search_text::search_body`) and lives only in the full-text index.
            ("body", "TEXT NOT NULL DEFAULT ''"),
            // The title as full-text search indexes it; '' marks a row written before
            // this column existed, which the start-up check reindexes.
            ("search_title", "TEXT NOT NULL DEFAULT ''"),
            ("parent_id", "BIGINT"),
            ("revision", "TEXT NOT NULL"),
            ("created_at", "TEXT NOT NULL"),
            ("created_by", "BIGINT"),
            ("updated_at", "TEXT NOT NULL"),
            ("updated_by", "BIGINT"),
            ("deleted_at", "TEXT"),
            ("deleted_by", "BIGINT"),
            // The workspace's `index_seqs.seq` when this row last changed: in-process
            // search indexes catch up on rows past what they have seen.
            ("index_seq", "BIGINT NOT NULL DEFAULT 0"),
            // The text read from the images the page embeds (OCR), in index form; '' when
            // none. Searched with the page's text.
            ("image_text", "TEXT NOT NULL DEFAULT ''"),
            // On SQLite the markdown, zlib-compressed (`content` is then ''); NULL on
            // PostgreSQL and in rows of older releases (`core::pages::stored`).
            ("content_z", "{blob}"),
            // The page's place among its siblings when people ordered them by hand
            // (NULL: by title); kept in the commits' `Cairn-Position` trailer too.
            ("position", "BIGINT"),
        ],
        constraints: &["CONSTRAINT pages_workspace_id_slug_key UNIQUE (workspace_id, slug)"],
    },
    Table {
        name: "revisions",
        columns: &[
            ("id", "{id}"),
            ("workspace_id", "BIGINT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE"),
            ("page_id", "BIGINT NOT NULL REFERENCES pages(id) ON DELETE CASCADE"),
            ("sha", "TEXT NOT NULL"),
            // The page's file in that commit (history entries read their content there).
            ("path", "TEXT NOT NULL"),
            // The page's blob in that commit: content is read by id, whatever the tree's size.
            ("blob", "TEXT"),
            ("action", "TEXT NOT NULL"),
            ("title", "TEXT NOT NULL DEFAULT ''"),
            ("message", "TEXT NOT NULL"),
            ("author_id", "BIGINT"),
            ("author_name", "TEXT NOT NULL"),
            ("created_at", "TEXT NOT NULL"),
        ],
        constraints: &["CONSTRAINT revisions_page_id_sha_key UNIQUE (page_id, sha)"],
    },
    Table {
        name: "revision_aliases",
        columns: &[
            ("workspace_id", "BIGINT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE"),
            // A revision id a history rewrite (a purge, an erasure) replaced, and the id
            // that commit has now: an old id still answers (history, diff, restore, a
            // save's base revision).
            ("old_sha", "TEXT NOT NULL"),
            ("new_sha", "TEXT NOT NULL"),
        ],
        constraints: &["PRIMARY KEY (workspace_id, old_sha)"],
    },
    Table {
        name: "page_aliases",
        columns: &[
            ("workspace_id", "BIGINT NOT NULL"),
            // A slug the page had before a rename: it keeps answering (a 308 to the
            // page's slug) until another page takes it or the page is purged. Derived from
            // the history's rename commits (`reindex`).
            ("slug", "TEXT NOT NULL"),
            ("page_id", "BIGINT NOT NULL REFERENCES pages(id) ON DELETE CASCADE"),
        ],
        constraints: &["PRIMARY KEY (workspace_id, slug)"],
    },
    Table {
        name: "page_tags",
        columns: &[
            ("page_id", "BIGINT NOT NULL REFERENCES pages(id) ON DELETE CASCADE"),
            ("workspace_id", "BIGINT NOT NULL"),
            ("tag", "TEXT NOT NULL"),
        ],
        constraints: &["PRIMARY KEY (page_id, tag)"],
    },
    Table {
        name: "page_links",
        columns: &[
            ("page_id", "BIGINT NOT NULL REFERENCES pages(id) ON DELETE CASCADE"),
            ("workspace_id", "BIGINT NOT NULL"),
            // Resolved target slug; no live page with it means a broken link.
            ("target", "TEXT NOT NULL"),
            ("position", "BIGINT NOT NULL"),
        ],
        constraints: &["PRIMARY KEY (page_id, target)"],
    },
    Table {
        name: "workspace_heads",
        columns: &[
            ("workspace_id", "BIGINT NOT NULL PRIMARY KEY REFERENCES workspaces(id) ON DELETE CASCADE"),
            // The commit the index rows reflect; a different branch head at start-up
            // means a crash between commit and transaction, repaired by reindexing.
            ("head", "TEXT NOT NULL"),
        ],
        constraints: &[],
    },
    Table {
        name: "index_seqs",
        columns: &[
            ("workspace_id", "BIGINT NOT NULL PRIMARY KEY REFERENCES workspaces(id) ON DELETE CASCADE"),
            // Bumped by every page row write of the workspace (see `pages.index_seq`).
            ("seq", "BIGINT NOT NULL DEFAULT 0"),
            // Set past `seq` when the workspace's rows are rebuilt: indexes built before
            // it start again from nothing.
            ("reset_at", "BIGINT NOT NULL DEFAULT 0"),
            // Bumped by every write of embedding vectors (see `page_vectors.vector_seq`).
            ("vector_seq", "BIGINT NOT NULL DEFAULT 0"),
        ],
        constraints: &[],
    },
    Table {
        name: "embed_queue",
        columns: &[
            // A page waiting to be embedded: written in the save's transaction, removed by
            // the embedding worker once the vectors of that `index_seq` are stored.
            ("page_id", "BIGINT NOT NULL PRIMARY KEY REFERENCES pages(id) ON DELETE CASCADE"),
            ("workspace_id", "BIGINT NOT NULL"),
            ("index_seq", "BIGINT NOT NULL"),
            ("attempts", "BIGINT NOT NULL DEFAULT 0"),
            ("queued_at", "TEXT NOT NULL"),
            // A pass's claim (a lease, as for deliveries): until then no other pass, in
            // this process or another, takes the row. A save clears it.
            ("locked_until", "TEXT"),
        ],
        constraints: &[],
    },
    Table {
        name: "page_vectors",
        columns: &[
            ("page_id", "BIGINT NOT NULL REFERENCES pages(id) ON DELETE CASCADE"),
            ("workspace_id", "BIGINT NOT NULL"),
            // 0 = the page as a whole (title and opening); 1… = passages in order.
            ("chunk", "BIGINT NOT NULL"),
            // The page's `index_seq` these vectors were computed from.
            ("index_seq", "BIGINT NOT NULL"),
            ("vector_seq", "BIGINT NOT NULL"),
            // Which model made them (its directory's fingerprint): another model's vectors
            // are not comparable and are recomputed.
            ("model", "TEXT NOT NULL"),
            // Little-endian f32s, L2-normalised.
            ("vector", "{blob} NOT NULL"),
        ],
        constraints: &["PRIMARY KEY (page_id, chunk)"],
    },
    Table {
        name: "events",
        columns: &[
            ("id", "{id}"),
            ("workspace_id", "BIGINT NOT NULL"),
            ("type", "TEXT NOT NULL"),
            // The Standard Webhooks body, as it will be delivered.
            ("payload", "TEXT NOT NULL"),
            ("created_at", "TEXT NOT NULL"),
            // The page's stable id: the events of one page reach a webhook in order.
            ("page_uid", "TEXT"),
        ],
        constraints: &[],
    },
    Table {
        // The co-editing sessions' update logs (core/live): each update a client sent,
        // written before it is acknowledged, until the session's text is a revision.
        name: "live_updates",
        columns: &[
            ("id", "{id}"),
            ("workspace_id", "BIGINT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE"),
            // The page's stable id: a session follows its page through renames.
            ("page_uid", "TEXT NOT NULL"),
            // Who sent it; 0 for the server's own (the text a session starts from).
            ("user_id", "BIGINT NOT NULL"),
            // A Yjs update, v1 encoding.
            ("body", "{blob} NOT NULL"),
            ("created_at", "TEXT NOT NULL"),
        ],
        constraints: &[],
    },
    Table {
        name: "webhooks",
        columns: &[
            ("id", "{id}"),
            ("workspace_id", "BIGINT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE"),
            ("url", "TEXT NOT NULL"),
            // The kinds it wants as `,page.created,page.updated,`; empty means every kind.
            ("events", "TEXT NOT NULL DEFAULT ''"),
            // The `whsec_…` signing secret. Kept as is (not hashed): signing needs it.
            ("secret", "TEXT NOT NULL"),
            ("active", "BIGINT NOT NULL DEFAULT 1"),
            ("created_by", "BIGINT"),
            ("created_at", "TEXT NOT NULL"),
        ],
        constraints: &[],
    },
    Table {
        name: "deliveries",
        columns: &[
            ("id", "{id}"),
            ("webhook_id", "BIGINT NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE"),
            ("event_id", "BIGINT NOT NULL"),
            ("page_uid", "TEXT NOT NULL DEFAULT ''"),
            // pending → delivered | retrying → … → delivered | failed.
            ("status", "TEXT NOT NULL"),
            ("attempts", "BIGINT NOT NULL DEFAULT 0"),
            ("response_status", "BIGINT"),
            ("error", "TEXT"),
            ("next_attempt_at", "TEXT"),
            // A worker's claim: until then no other worker takes it. A worker killed
            // mid-attempt leaves a claim that runs out, and the attempt is made again.
            ("locked_until", "TEXT"),
            ("created_at", "TEXT NOT NULL"),
            ("delivered_at", "TEXT"),
        ],
        constraints: &["CONSTRAINT deliveries_event_id_webhook_id_key UNIQUE (event_id, webhook_id)"],
    },
    Table {
        name: "uploads",
        columns: &[
            ("workspace_id", "BIGINT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE"),
            // `<sha256 of the bytes>.<ext>`: the file `DATA_DIR/uploads/<workspace>/<name>`.
            ("name", "TEXT NOT NULL"),
            ("content_type", "TEXT NOT NULL"),
            ("size", "BIGINT NOT NULL"),
            ("created_by", "BIGINT"),
            ("created_at", "TEXT NOT NULL"),
            // OCR: NULL = not tried; '' = tried, no text found.
            ("ocr_text", "TEXT"),
        ],
        constraints: &["PRIMARY KEY (workspace_id, name)"],
    },
    Table {
        // An account's identity at the OpenID provider: the provider's subject, which
        // outlives an email changed there.
        name: "user_identities",
        columns: &[
            ("issuer", "TEXT NOT NULL"),
            ("subject", "TEXT NOT NULL"),
            ("user_id", "BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE"),
            ("created_at", "TEXT NOT NULL"),
        ],
        constraints: &["PRIMARY KEY (issuer, subject)"],
    },
    Table {
        // A single sign-on begun and not yet back: what the return must match. Used once.
        name: "sso_logins",
        columns: &[
            // SHA-256 of the `state` sent to the provider (also the browser's cookie).
            ("state_hash", "TEXT NOT NULL PRIMARY KEY"),
            ("nonce", "TEXT NOT NULL"),
            ("pkce_verifier", "TEXT NOT NULL"),
            // Where the app goes afterwards (an /app/ path).
            ("next", "TEXT NOT NULL DEFAULT ''"),
            // The invitation the sign-in accepts, if any (its link's token).
            ("invitation", "TEXT"),
            ("created_at", "BIGINT NOT NULL"),
        ],
        constraints: &[],
    },
    Table {
        // An invitation to a workspace: a one-use link, kept by its SHA-256 only.
        name: "invitations",
        columns: &[
            ("id", "{id}"),
            ("workspace_id", "BIGINT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE"),
            ("email", "TEXT NOT NULL"),
            ("role", "TEXT NOT NULL"),
            ("token_hash", "TEXT NOT NULL"),
            ("invited_by", "BIGINT REFERENCES users(id) ON DELETE SET NULL"),
            // The account that had the email when the invitation was made: it sees the
            // invitation in the app without the link.
            ("invitee_id", "BIGINT REFERENCES users(id) ON DELETE CASCADE"),
            ("created_at", "TEXT NOT NULL"),
            ("expires_at", "BIGINT NOT NULL"),
        ],
        constraints: &["CONSTRAINT invitations_token_hash_key UNIQUE (token_hash)"],
    },
    Table {
        // OAuth clients of the MCP endpoint, registered by themselves (RFC 7591).
        name: "oauth_clients",
        columns: &[
            ("id", "TEXT NOT NULL PRIMARY KEY"),
            ("name", "TEXT NOT NULL"),
            ("uri", "TEXT"),
            // A JSON array of the exact redirect URIs.
            ("redirect_uris", "TEXT NOT NULL"),
            ("auth_method", "TEXT NOT NULL"),
            ("secret_hash", "TEXT"),
            ("created_at", "BIGINT NOT NULL"),
        ],
        constraints: &[],
    },
    Table {
        // What a person allowed a client: one per client and person.
        name: "oauth_grants",
        columns: &[
            ("id", "{id}"),
            ("client_id", "TEXT NOT NULL REFERENCES oauth_clients(id) ON DELETE CASCADE"),
            ("user_id", "BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE"),
            // The resource its tokens are bound to (RFC 8707): the MCP endpoint's URL.
            ("resource", "TEXT NOT NULL"),
            ("created_at", "BIGINT NOT NULL"),
            ("last_used_at", "BIGINT"),
        ],
        constraints: &["CONSTRAINT oauth_grants_client_user_key UNIQUE (client_id, user_id)"],
    },
    Table {
        // Authorization codes waiting to be exchanged, once.
        name: "oauth_codes",
        columns: &[
            ("code_hash", "TEXT NOT NULL PRIMARY KEY"),
            ("client_id", "TEXT NOT NULL"),
            ("user_id", "BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE"),
            ("redirect_uri", "TEXT NOT NULL"),
            ("code_challenge", "TEXT NOT NULL"),
            ("resource", "TEXT NOT NULL"),
            ("created_at", "BIGINT NOT NULL"),
            ("expires_at", "BIGINT NOT NULL"),
        ],
        constraints: &[],
    },
    Table {
        // Access and refresh tokens, by SHA-256; a refresh token is kept spent
        // (`used_at`) until it expires, so a second use is seen.
        name: "oauth_tokens",
        columns: &[
            ("token_hash", "TEXT NOT NULL PRIMARY KEY"),
            ("grant_id", "BIGINT NOT NULL REFERENCES oauth_grants(id) ON DELETE CASCADE"),
            ("kind", "TEXT NOT NULL"),
            ("created_at", "BIGINT NOT NULL"),
            ("expires_at", "BIGINT NOT NULL"),
            ("used_at", "BIGINT"),
        ],
        constraints: &[],
    },
];

const INDEXES: &[&str] = &[
    "CREATE INDEX IF NOT EXISTS sessions_user_id_idx ON sessions (user_id)",
    "CREATE INDEX IF NOT EXISTS api_tokens_user_id_idx ON api_tokens (user_id)",
    "CREATE INDEX IF NOT EXISTS memberships_user_id_idx ON memberships (user_id)",
    "CREATE INDEX IF NOT EXISTS pages_workspace_updated_idx ON pages (workspace_id, updated_at)",
    "CREATE INDEX IF NOT EXISTS pages_parent_idx ON pages (workspace_id, parent_id)",
    "CREATE UNIQUE INDEX IF NOT EXISTS pages_workspace_uid_idx ON pages (workspace_id, uid)",
    "CREATE INDEX IF NOT EXISTS revisions_page_idx ON revisions (page_id, created_at)",
    "CREATE INDEX IF NOT EXISTS page_tags_tag_idx ON page_tags (workspace_id, tag)",
    "CREATE INDEX IF NOT EXISTS page_links_target_idx ON page_links (workspace_id, target)",
    "CREATE INDEX IF NOT EXISTS events_workspace_idx ON events (workspace_id, id)",
    "CREATE INDEX IF NOT EXISTS events_created_idx ON events (created_at)",
    "CREATE INDEX IF NOT EXISTS webhooks_workspace_idx ON webhooks (workspace_id, id)",
    "CREATE INDEX IF NOT EXISTS user_identities_user_idx ON user_identities (user_id)",
    "CREATE INDEX IF NOT EXISTS invitations_workspace_idx ON invitations (workspace_id, id)",
    "CREATE INDEX IF NOT EXISTS invitations_invitee_idx ON invitations (invitee_id)",
    "CREATE INDEX IF NOT EXISTS oauth_grants_user_idx ON oauth_grants (user_id)",
    "CREATE INDEX IF NOT EXISTS oauth_tokens_grant_idx ON oauth_tokens (grant_id)",
    "CREATE INDEX IF NOT EXISTS live_updates_page_idx ON live_updates (workspace_id, page_uid, id)",
    "CREATE INDEX IF NOT EXISTS deliveries_webhook_idx ON deliveries (webhook_id, id)",
    "CREATE INDEX IF NOT EXISTS deliveries_due_idx ON deliveries (status, next_attempt_at)",
    "CREATE INDEX IF NOT EXISTS deliveries_page_idx ON deliveries (webhook_id, page_uid, event_id)",
    "CREATE INDEX IF NOT EXISTS uploads_name_idx ON uploads (name)",
    "CREATE INDEX IF NOT EXISTS pages_workspace_seq_idx ON pages (workspace_id, index_seq)",
    "CREATE INDEX IF NOT EXISTS page_vectors_seq_idx ON page_vectors (workspace_id, vector_seq)",
    // What keyword search needs of each match, without reading the page row: on SQLite
    // `deleted_at` sits past `content` (kilobytes, on overflow pages), so
    // filtering thousands of matches through the table costs several times the ranking.
    "CREATE INDEX IF NOT EXISTS pages_search_filter_idx ON pages (id, workspace_id, deleted_at, slug)",
];

/// Indexes earlier releases made that no query reads, dropped: each cost every save an
/// entry written at a random place (a page of the database's log on SQLite).
/// `revisions (workspace_id, sha)`: a revision is found by its page and sha (the
/// `UNIQUE (page_id, sha)` constraint's index), never by workspace; the only other
/// reader was the cascade of a workspace's deletion, one scan of the table for a rare
/// operation (measured in commit dd3525d).
const RETIRED_INDEXES: &[&str] = &["revisions_sha_idx"];

/// SQLite only, for the markdown its rows keep compressed (`core::pages::stored`):
const SQLITE_ONLY: &[&str] = &[
    // A row someone writes plain markdown or a search title into loses its compressed
    // copy: only older releases do so there, and this release must then read what they
    // wrote.
    "CREATE TRIGGER IF NOT EXISTS pages_content_written_plain AFTER UPDATE OF content, search_title ON pages \
     WHEN new.content_z IS NOT NULL AND (new.content <> '' OR new.search_title <> '') \
     BEGIN UPDATE pages SET content_z = NULL WHERE id = new.id; END",
    // The rows still plain, for the maintenance pass that compresses them
    // (`rows::compress_plain_rows`): without it, each pass would read the whole table to
    // find that none are left. Compressed rows are not in it.
    "CREATE INDEX IF NOT EXISTS pages_plain_markdown_idx ON pages (id) WHERE content <> '' AND content_z IS NULL",
];

/// SQLite: tables of small rows looked up by their primary key, created `WITHOUT ROWID`
/// so that the key's index is the table. A rowid table keeps each row twice, in the
/// table and in the key's index: 1.4 MiB of a 20 MiB database after the bench's
/// 1,000-page run (measured in commit 8ef3be2). Only at creation:
/// tables made by an earlier release stay rowid tables, which answer the same queries.
const SQLITE_WITHOUT_ROWID: &[&str] = &["page_tags", "page_links", "embed_queue"];

/// Derived full-text state: its name, and the statements that create it from nothing.
struct Search {
    name: &'static str,
    create: &'static [&'static str],
}

/// PostgreSQL: a `tsvector` column written with each page row (from the title and the
/// search text, which the database does not hold) plus a GIN index. The `english`
/// configuration stems (deploying → deploy) and drops English stop words; words of other
/// scripts are kept as written, lower-cased. Creating it marks every page's search text
/// stale, so the start-up check (`reindex::repair`) writes it from the pages' files.
const PG_SEARCH: Search = Search {
    name: "pages.search_vector",
    create: &[
        "ALTER TABLE pages ADD COLUMN search_vector tsvector",
        "CREATE INDEX pages_search_vector_idx ON pages USING GIN (search_vector)",
        "UPDATE pages SET search_title = ''",
    ],
};
const PG_SEARCH_DROP: &[&str] = &["ALTER TABLE pages DROP COLUMN IF EXISTS search_vector"];

/// SQLite: the full-text index lives in a file of its own (`search_file.rs`); releases
/// before it kept a contentless FTS5 table here, written with each page row, and a
/// trigger deleting an entry with its row. Dropped, with their fingerprint.
const SQLITE_SEARCH_DROP: &[&str] = &[
    "DROP TRIGGER IF EXISTS pages_fts_ai",
    "DROP TRIGGER IF EXISTS pages_fts_ad",
    "DROP TRIGGER IF EXISTS pages_fts_au",
    "DROP TABLE IF EXISTS pages_fts",
    "DELETE FROM schema_meta WHERE key = 'search_fingerprint:pages_fts'",
];

/// SQLite: the database's identity for its search file, made once (a search file made
/// for another database — one restored, or made anew beside an old `DATA_DIR` — is
/// made again from this one's rows).
pub(crate) async fn search_generation(conn: &mut AnyConnection) -> anyhow::Result<String> {
    sqlx::query("INSERT INTO schema_meta (key, value) VALUES ('search_generation', $1) ON CONFLICT (key) DO NOTHING")
        .bind(uuid::Uuid::new_v4().to_string())
        .execute(&mut *conn)
        .await?;
    Ok(sqlx::query_scalar("SELECT value FROM schema_meta WHERE key = 'search_generation'")
        .fetch_one(&mut *conn)
        .await?)
}

fn ddl(template: &str, backend: Backend) -> String {
    let (id, blob) = match backend {
        Backend::Sqlite => ("INTEGER PRIMARY KEY AUTOINCREMENT", "BLOB"),
        Backend::Postgres => ("BIGSERIAL PRIMARY KEY", "BYTEA"),
    };
    template.replace("{id}", id).replace("{blob}", blob)
}

async fn exec(conn: &mut AnyConnection, sql: String) -> anyhow::Result<()> {
    sqlx::query(AssertSqlSafe(sql.clone()))
        .execute(&mut *conn)
        .await
        .with_context(|| format!("schema statement failed: {sql}"))?;
    Ok(())
}

async fn table_exists(conn: &mut AnyConnection, backend: Backend, table: &str) -> anyhow::Result<bool> {
    let sql = match backend {
        Backend::Sqlite => "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = $1",
        Backend::Postgres => {
            "SELECT COUNT(*) FROM information_schema.tables \
             WHERE table_schema = current_schema() AND table_name = $1"
        }
    };
    let n: i64 = sqlx::query_scalar(sql).bind(table).fetch_one(&mut *conn).await?;
    Ok(n > 0)
}

/// The tables this release knows, parents before children (the order a restore loads).
pub(crate) fn table_names() -> impl Iterator<Item = &'static str> {
    TABLES.iter().map(|t| t.name)
}

/// Whether the table's `id` is generated (a serial on PostgreSQL).
pub(crate) fn has_serial_id(table: &str) -> bool {
    TABLES.iter().any(|t| t.name == table && t.columns.first().is_some_and(|c| c.1 == "{id}"))
}

pub(crate) async fn columns_of(conn: &mut AnyConnection, backend: Backend, table: &str) -> anyhow::Result<Vec<String>> {
    let sql = match backend {
        Backend::Sqlite => "SELECT name FROM pragma_table_info($1)",
        Backend::Postgres => {
            "SELECT column_name::text FROM information_schema.columns \
             WHERE table_schema = current_schema() AND table_name = $1"
        }
    };
    let rows = sqlx::query(sql).bind(table).fetch_all(&mut *conn).await?;
    rows.iter().map(|r| r.try_get::<String, _>(0).map_err(Into::into)).collect()
}

/// Brings the schema to this release's shape. Idempotent; never drops user data.
pub(crate) async fn converge(conn: &mut AnyConnection, backend: Backend) -> anyhow::Result<ConvergeReport> {
    if backend == Backend::Postgres {
        // Two instances starting together must not race on DDL. Held for this
        // connection's session, released below.
        sqlx::query("SELECT pg_advisory_lock(7245210391)").execute(&mut *conn).await?;
    }
    let result = converge_locked(conn, backend).await;
    if backend == Backend::Postgres {
        sqlx::query("SELECT pg_advisory_unlock(7245210391)").execute(&mut *conn).await.ok();
    }
    result
}

async fn converge_locked(conn: &mut AnyConnection, backend: Backend) -> anyhow::Result<ConvergeReport> {
    let mut report = ConvergeReport::default();
    for table in TABLES {
        if !table_exists(conn, backend, table.name).await? {
            let mut parts: Vec<String> =
                table.columns.iter().map(|(name, def)| format!("{name} {}", ddl(def, backend))).collect();
            parts.extend(table.constraints.iter().map(|c| c.to_string()));
            let options = if backend == Backend::Sqlite && SQLITE_WITHOUT_ROWID.contains(&table.name) {
                " WITHOUT ROWID"
            } else {
                ""
            };
            exec(conn, format!("CREATE TABLE IF NOT EXISTS {} ({}){options}", table.name, parts.join(", "))).await?;
            report.created_tables.push(table.name.to_owned());
            continue;
        }
        let existing = columns_of(conn, backend, table.name).await?;
        for (name, def) in table.columns {
            if !existing.iter().any(|c| c == name) {
                exec(conn, format!("ALTER TABLE {} ADD COLUMN {name} {}", table.name, ddl(def, backend))).await?;
                report.added_columns.push(format!("{}.{name}", table.name));
            }
        }
    }
    for index in INDEXES {
        exec(conn, index.to_string()).await?;
    }
    for index in RETIRED_INDEXES {
        exec(conn, format!("DROP INDEX IF EXISTS {index}")).await?;
    }
    if backend == Backend::Sqlite {
        for statement in SQLITE_ONLY {
            exec(conn, statement.to_string()).await?;
        }
    }
    converge_search(conn, backend, &mut report).await?;
    Ok(report)
}

fn fingerprint(search: &Search) -> String {
    let mut h = Sha256::new();
    for stmt in search.create {
        h.update(stmt.as_bytes());
        h.update(b";\n");
    }
    hex::encode(h.finalize())
}

async fn converge_search(
    conn: &mut AnyConnection,
    backend: Backend,
    report: &mut ConvergeReport,
) -> anyhow::Result<()> {
    if backend == Backend::Sqlite {
        // The write lock first: a deferred transaction whose write finds that another
        // process starting beside this one wrote since it began is refused at once
        // (SQLITE_BUSY, no waiting), where `BEGIN IMMEDIATE` waits its turn.
        let mut tx = conn.begin_with("BEGIN IMMEDIATE").await?;
        for stmt in SQLITE_SEARCH_DROP {
            exec(&mut tx, stmt.to_string()).await?;
        }
        tx.commit().await?;
        return Ok(());
    }
    let (search, drop) = (&PG_SEARCH, PG_SEARCH_DROP);
    let key = format!("search_fingerprint:{}", search.name);
    let want = fingerprint(search);
    let stored: Option<String> = sqlx::query_scalar("SELECT value FROM schema_meta WHERE key = $1")
        .bind(&key)
        .fetch_optional(&mut *conn)
        .await?;
    let exists = columns_of(conn, backend, "pages").await?.iter().any(|c| c == "search_vector");
    if exists && stored.as_deref() == Some(want.as_str()) {
        return Ok(());
    }
    // Both engines run DDL inside transactions, so a rebuild is all or nothing.
    let mut tx = conn.begin().await?;
    for stmt in drop.iter().chain(search.create) {
        exec(&mut tx, stmt.to_string()).await?;
    }
    sqlx::query(
        "INSERT INTO schema_meta (key, value) VALUES ($1, $2) \
         ON CONFLICT (key) DO UPDATE SET value = excluded.value",
    )
    .bind(&key)
    .bind(&want)
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    if exists {
        report.rebuilt_search.push(search.name.to_owned());
    } else {
        report.created_search.push(search.name.to_owned());
    }
    Ok(())
}
