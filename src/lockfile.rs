//! Advisory locks on files (`flock`), shared by the data directory's lock
//! (`store::compact`) and a repository's packing lock (`git::pack`). A lock belongs to
//! the open file: it is released when the file closes or the process dies, and two
//! opens in one process exclude each other as two processes would.

use std::fs::{File, TryLockError};
use std::path::Path;

use anyhow::Context;

/// Opens (creating it, empty) the lock file at `path`, without locking it.
pub(crate) fn open(path: &Path) -> anyhow::Result<File> {
    File::options()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .with_context(|| format!("cannot open {}", path.display()))
}

/// The file at `path` locked exclusively, or None while anyone else holds a lock on it.
pub(crate) fn try_exclusive(path: &Path) -> anyhow::Result<Option<File>> {
    let file = open(path)?;
    match file.try_lock() {
        Ok(()) => Ok(Some(file)),
        Err(TryLockError::WouldBlock) => Ok(None),
        Err(TryLockError::Error(e)) => Err(e).with_context(|| format!("cannot lock {}", path.display())),
    }
}

/// The file at `path` locked exclusively, waiting for whoever holds it (blocks).
pub(crate) fn exclusive(path: &Path) -> anyhow::Result<File> {
    let file = open(path)?;
    file.lock().with_context(|| format!("cannot lock {}", path.display()))?;
    Ok(file)
}
