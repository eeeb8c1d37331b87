//! A pack's index file (`.idx`): its header and fan-out table, read by the packing run
//! (how many objects a pack holds, which) and by the delta rewrite alike.

use std::io::Read;
use std::path::Path;

use anyhow::Context;

/// The size of an index's header and fan-out table (version 2; version 1 has no header).
pub(super) const INDEX_HEAD: usize = 8 + 256 * 4;

/// Reads a pack's index — only its head unless `whole` — and answers it with where its
/// fan-out table starts (256 big-endian counts, the last one the number of objects:
/// after a version-2 header, or at the start of an old version-1 index) and that count.
pub(super) fn index_of(pack: &Path, whole: bool) -> anyhow::Result<(Vec<u8>, usize, u32)> {
    let idx = pack.with_extension("idx");
    let mut file = std::fs::File::open(&idx).with_context(|| format!("cannot read {}", idx.display()))?;
    let mut bytes = Vec::new();
    if whole {
        file.read_to_end(&mut bytes)?;
    } else {
        file.take(INDEX_HEAD as u64).read_to_end(&mut bytes)?;
    }
    let fanout = if bytes.starts_with(b"\xfftOc") { 8 } else { 0 };
    let count = bytes
        .get(fanout + 255 * 4..fanout + 256 * 4)
        .map(|b| u32::from_be_bytes(b.try_into().expect("four bytes")))
        .with_context(|| format!("{} is cut short", idx.display()))?;
    Ok((bytes, fanout, count))
}
