//! Several statements of one write, sent as one.
//!
//! sqlx runs each SQLite connection on a worker thread of its own: every statement is
//! a hand-off to that thread and back, two thread wake-ups that cost more than the
//! statement itself (a page's row, its index entry, tags, links and revision are ten
//! small statements; measured in commit e01e180). A [`Script`] gives
//! SQLite all of them in one hand-off: one query string of several statements, whose
//! `$n` placeholders number into one list of values. PostgreSQL's extended protocol
//! takes one statement per message, so there the statements run one after another on
//! the same connection — the same SQL, the same order, the same transaction.
//!
//! Each statement is written with its own `$1`, `$2`… for the values pushed with it;
//! [`Script::run`] renumbers them for SQLite. No statement may hold a `$` other than its
//! placeholders (values are bound, never spliced in, so none does).
//!
//! sqlx 0.9 calls several statements in one SQLite query a behaviour it may drop
//! (launchbadge/sqlx#3108, "use `raw_sql`", which binds nothing). `Cargo.lock` pins the
//! version; were it dropped, `tests/it/system.rs` `a_script_runs_every_statement_in_order`
//! and every save test fail (a page's tags, links and revision would be missing), and
//! the way back is the PostgreSQL branch below: the same statements one by one.

use sqlx::any::AnyRow;
use sqlx::{AnyConnection, AssertSqlSafe};

use crate::store::Backend;

/// A value bound to a script's statement.
#[derive(Debug, Clone)]
pub enum Value {
    Int(i64),
    OptInt(Option<i64>),
    Text(String),
    OptText(Option<String>),
    OptBytes(Option<Vec<u8>>),
}

impl From<i64> for Value {
    fn from(v: i64) -> Value {
        Value::Int(v)
    }
}

impl From<Option<i64>> for Value {
    fn from(v: Option<i64>) -> Value {
        Value::OptInt(v)
    }
}

impl From<&str> for Value {
    fn from(v: &str) -> Value {
        Value::Text(v.to_owned())
    }
}

impl From<String> for Value {
    fn from(v: String) -> Value {
        Value::Text(v)
    }
}

impl From<&crate::time::Timestamp> for Value {
    fn from(v: &crate::time::Timestamp) -> Value {
        Value::Text(v.as_str().to_owned())
    }
}

impl From<&String> for Value {
    fn from(v: &String) -> Value {
        Value::Text(v.clone())
    }
}

impl From<Option<String>> for Value {
    fn from(v: Option<String>) -> Value {
        Value::OptText(v)
    }
}

impl From<Option<crate::time::Timestamp>> for Value {
    fn from(v: Option<crate::time::Timestamp>) -> Value {
        Value::OptText(v.map(|t| t.as_str().to_owned()))
    }
}

impl From<Option<&String>> for Value {
    fn from(v: Option<&String>) -> Value {
        Value::OptText(v.cloned())
    }
}

/// Statements to run in order, in the caller's transaction.
#[derive(Debug, Default)]
pub struct Script {
    statements: Vec<(String, Vec<Value>)>,
}

impl Script {
    pub fn new() -> Script {
        Script::default()
    }

    /// Adds a statement; its `$1`, `$2`… are `values`, in order.
    pub fn push(&mut self, sql: impl Into<String>, values: Vec<Value>) {
        self.statements.push((sql.into(), values));
    }

    /// Puts a statement without values before the others.
    pub fn prepend(&mut self, sql: impl Into<String>) {
        self.statements.insert(0, (sql.into(), vec![]));
    }

    pub fn is_empty(&self) -> bool {
        self.statements.is_empty()
    }

    /// Runs every statement, in order, and answers the rows they returned (those of
    /// `RETURNING` clauses), in order. A failing statement fails the script; what the
    /// earlier ones wrote stays in the caller's transaction, to be rolled back with it.
    pub async fn run(self, conn: &mut AnyConnection) -> Result<Vec<AnyRow>, sqlx::Error> {
        if self.statements.is_empty() {
            return Ok(vec![]);
        }
        match Backend::of(conn) {
            Backend::Sqlite => {
                let mut sql = String::new();
                let mut values = Vec::new();
                for (statement, vals) in self.statements {
                    sql.push_str(&renumber(&statement, values.len()));
                    sql.push_str(";\n");
                    values.extend(vals);
                }
                // fetch_all, never fetch_one/optional: those stop the worker at the first
                // row, and the statements after it would not run.
                Ok(bound(&sql, values).fetch_all(&mut *conn).await?)
            }
            Backend::Postgres => {
                let mut rows = Vec::new();
                for (statement, vals) in self.statements {
                    rows.extend(bound(&statement, vals).fetch_all(&mut *conn).await?);
                }
                Ok(rows)
            }
        }
    }
}

fn bound(sql: &str, values: Vec<Value>) -> sqlx::query::Query<'_, sqlx::Any, sqlx::any::AnyArguments> {
    let mut q = sqlx::query(AssertSqlSafe(sql));
    for v in values {
        q = match v {
            Value::Int(v) => q.bind(v),
            Value::OptInt(v) => q.bind(v),
            Value::Text(v) => q.bind(v),
            Value::OptText(v) => q.bind(v),
            Value::OptBytes(v) => q.bind(v),
        };
    }
    q
}

/// `sql` with each placeholder `$n` written `$(n + offset)`.
fn renumber(sql: &str, offset: usize) -> String {
    if offset == 0 {
        return sql.to_owned();
    }
    let mut out = String::with_capacity(sql.len() + 16);
    let mut rest = sql;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..=at]);
        rest = &rest[at + 1..];
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        match rest[..digits].parse::<usize>() {
            Ok(n) => out.push_str(&(n + offset).to_string()),
            Err(_) => out.push_str(&rest[..digits]),
        }
        rest = &rest[digits..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_renumbered_past_the_values_before_them() {
        assert_eq!(renumber("SELECT $1, $2", 0), "SELECT $1, $2");
        assert_eq!(
            renumber("UPDATE t SET a = $1 WHERE b = $12 AND c = $1", 3),
            "UPDATE t SET a = $4 WHERE b = $15 AND c = $4"
        );
        assert_eq!(renumber("SELECT $", 5), "SELECT $");
        assert_eq!(renumber("no placeholders", 9), "no placeholders");
    }
}
