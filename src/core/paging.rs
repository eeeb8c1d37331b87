//! Paging of lists: `limit` (default 50, at most 500) and `offset`.

use sqlx::any::AnyRow;
use sqlx::{Any, AnyConnection, SqlSafeStr};

use crate::error::{Error, Result};

pub(crate) const DEFAULT_LIMIT: i64 = 50;
pub(crate) const MAX_LIMIT: i64 = 500;

/// A window of a list, checked: `limit` in 1..=500, `offset` ≥ 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Paging {
    pub limit: i64,
    pub offset: i64,
}

impl Paging {
    /// Defaults for what is absent; a limit above the maximum is cut to it; a limit
    /// below 1 or a negative offset is 400.
    pub(crate) fn new(limit: Option<i64>, offset: Option<i64>) -> Result<Paging> {
        let limit = limit.unwrap_or(DEFAULT_LIMIT);
        let offset = offset.unwrap_or(0);
        if limit < 1 || offset < 0 {
            return Err(Error::invalid_paging());
        }
        Ok(Paging { limit: limit.min(MAX_LIMIT), offset })
    }
}

impl Paging {
    /// This window of a list, and how many items the whole list has: `window` selects
    /// the rows of `key` (bound as `$1`) and ends in `LIMIT $2 OFFSET $3`; `count` counts
    /// the same rows. Run it on one snapshot (`Db::snapshot`), so the two agree.
    pub(crate) async fn window<K, T>(
        self,
        conn: &mut AnyConnection,
        window: impl SqlSafeStr,
        count: impl SqlSafeStr,
        key: K,
    ) -> Result<(Vec<T>, i64)>
    where
        K: for<'q> sqlx::Encode<'q, Any> + sqlx::Type<Any> + Clone + Send + 'static,
        T: for<'r> sqlx::FromRow<'r, AnyRow> + Send + Unpin,
    {
        let items =
            sqlx::query_as(window).bind(key.clone()).bind(self.limit).bind(self.offset).fetch_all(&mut *conn).await?;
        let total = sqlx::query_scalar(count).bind(key).fetch_one(&mut *conn).await?;
        Ok((items, total))
    }
}

impl Paging {
    /// This window of a list held in memory, and the list's length.
    pub(crate) fn slice<T>(self, items: Vec<T>) -> (Vec<T>, i64) {
        let total = items.len() as i64;
        let window = items.into_iter().skip(self.offset as usize).take(self.limit as usize).collect();
        (window, total)
    }
}

impl Default for Paging {
    fn default() -> Self {
        Paging { limit: DEFAULT_LIMIT, offset: 0 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_bounds_and_refusals() {
        assert_eq!(Paging::new(None, None).unwrap(), Paging { limit: 50, offset: 0 });
        assert_eq!(Paging::new(Some(10_000), Some(3)).unwrap(), Paging { limit: 500, offset: 3 });
        assert_eq!(Paging::new(Some(0), None).unwrap_err().code, crate::error::Code::InvalidPaging);
        assert_eq!(Paging::new(None, Some(-1)).unwrap_err().code, crate::error::Code::InvalidPaging);
    }

    #[test]
    fn slices_a_list_in_memory() {
        let p = Paging::new(Some(2), Some(3)).unwrap();
        assert_eq!(p.slice((0..6).collect()), (vec![3, 4], 6));
        assert_eq!(p.slice((0..2).collect::<Vec<i32>>()), (vec![], 2));
    }
}
