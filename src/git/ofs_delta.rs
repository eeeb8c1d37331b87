//! Deltas that name their base by its place in the pack.
//!
//! A pack stores most objects as deltas against a base object. libgit2's pack builder
//! names each base by its 20-byte id (`REF_DELTA`); git itself names a base in the same
//! pack by how far back it starts (`OFS_DELTA`, one to three bytes here). With tens of
//! thousands of small deltas — a tree delta is ≈ 45 bytes — the ids were 0.5 MiB of a
//! 14 MiB pack after the bench's 1,000-page run (measured in commit 8ef3be2). [`
//! rewrite`] copies a pack libgit2 wrote, entry by entry, giving each delta
//! whose base comes earlier the offset form; every other byte is copied as it is (the
//! compressed data is never touched). The copy goes through libgit2's indexer, which
//! inflates every object, recomputes its id and writes the new pack's index, so a copy
//! that did not hold exactly the same objects would fail here, before it is named.
//! Both forms are standard: git, libgit2 and every other reader read either.

use std::io::{BufReader, Read, Write};
use std::path::Path;

use anyhow::{Context, bail, ensure};
use sha1::{Digest, Sha1};

/// Entry types of the pack format.
const OFS_DELTA: u8 = 6;
const REF_DELTA: u8 = 7;

/// Writes a copy of `pack-<name>.pack` in `pack_dir` whose deltas name earlier bases by
/// offset, with its index, and answers the copy's name; the original is left in place
/// for the caller to remove once the copy is durable. Answers `name` itself when no
/// delta would change.
pub(super) fn rewrite(pack_dir: &Path, name: &str) -> anyhow::Result<String> {
    let pack = pack_dir.join(format!("pack-{name}.pack"));
    let index = Index::read(&pack)?;
    let order = index.in_pack_order()?;
    let file = std::fs::File::open(&pack).with_context(|| format!("cannot read {}", pack.display()))?;
    let pack_len = file.metadata()?.len();
    let mut input = BufReader::with_capacity(1 << 16, file);
    let mut out = Output { indexer: git2::Indexer::new(None, pack_dir, 0o444, false)?, hash: Sha1::new(), at: 0 };

    let mut head = [0u8; 12];
    input.read_exact(&mut head)?;
    ensure!(&head[..4] == b"PACK", "{} is not a pack", pack.display());
    out.write(&head)?;
    // Where each object starts in the copy, by its place in the index (for the deltas
    // that follow it); `u64::MAX` until it is written.
    let mut moved = vec![u64::MAX; index.count];
    let mut changed = 0usize;
    let mut entry = Vec::new();
    for (n, &(offset, position)) in order.iter().enumerate() {
        let end = order.get(n + 1).map_or(pack_len - 20, |next| next.0);
        ensure!(end > offset && offset >= 12, "{}: entries overlap at {offset}", pack.display());
        entry.resize((end - offset) as usize, 0);
        input.read_exact(&mut entry)?;
        let starts = out.at;
        let header = header_len(&entry)?;
        let base = ((entry[0] >> 4) & 7 == REF_DELTA)
            .then(|| entry.get(header..header + 20))
            .flatten()
            .and_then(|base| index.position(base))
            .map(|at| moved[at])
            .filter(|&at| at != u64::MAX);
        match base {
            Some(base_at) => {
                // The type's three bits become OFS_DELTA; the size bits stay.
                let mut first = entry[..header].to_vec();
                first[0] = (first[0] & !0x70) | (OFS_DELTA << 4);
                out.write(&first)?;
                out.write(&offset_bytes(starts - base_at))?;
                out.write(&entry[header + 20..])?;
                changed += 1;
            }
            None => out.write(&entry)?,
        }
        moved[position] = starts;
    }
    if changed == 0 {
        return Ok(name.to_owned());
    }
    let sum = out.hash.finalize_reset();
    out.indexer.write_all(&sum)?;
    Ok(out.indexer.commit()?)
}

/// The copy as it is written: into libgit2's indexer, hashed for the pack's trailer.
struct Output<'a> {
    indexer: git2::Indexer<'a>,
    hash: Sha1,
    at: u64,
}

impl Output<'_> {
    fn write(&mut self, bytes: &[u8]) -> anyhow::Result<()> {
        self.indexer.write_all(bytes)?;
        self.hash.update(bytes);
        self.at += bytes.len() as u64;
        Ok(())
    }
}

/// The length of an entry's type-and-size header: bytes up to the first without its
/// high bit.
fn header_len(entry: &[u8]) -> anyhow::Result<usize> {
    match entry.iter().position(|b| b & 0x80 == 0) {
        Some(last) => Ok(last + 1),
        None => bail!("a pack entry's header runs past its end"),
    }
}

/// A base's distance back in git's offset encoding: big-endian groups of seven bits,
/// each but the last with its high bit set and one less than its value (so that no
/// distance has two encodings).
fn offset_bytes(mut distance: u64) -> Vec<u8> {
    let mut bytes = vec![(distance & 0x7f) as u8];
    distance >>= 7;
    while distance > 0 {
        distance -= 1;
        bytes.push(0x80 | (distance & 0x7f) as u8);
        distance >>= 7;
    }
    bytes.reverse();
    bytes
}

/// A version-2 pack index, read whole: its ids sorted, and where each object starts.
struct Index {
    bytes: Vec<u8>,
    count: usize,
}

/// Where the ids start in a version-2 index: after its header and fan-out table.
const IDS: usize = super::pack_index::INDEX_HEAD;

impl Index {
    /// The index of `pack` (read by `pack_index::index_of`, as the packing run reads them).
    fn read(pack: &Path) -> anyhow::Result<Index> {
        let (bytes, fanout, count) = super::pack_index::index_of(pack, true)?;
        let count = count as usize;
        ensure!(fanout + 256 * 4 == IDS, "{} has a version-1 index", pack.display());
        // Ids, CRCs and 4-byte offsets, then the pack's and the index's checksums at least.
        ensure!(bytes.len() >= IDS + count * 28 + 40, "the index of {} is cut short", pack.display());
        Ok(Index { bytes, count })
    }

    fn id(&self, n: usize) -> &[u8] {
        &self.bytes[IDS + n * 20..IDS + n * 20 + 20]
    }

    /// The place of `id` in the index (its ids are sorted).
    fn position(&self, id: &[u8]) -> Option<usize> {
        let (mut low, mut high) = (0, self.count);
        while low < high {
            let mid = (low + high) / 2;
            match self.id(mid).cmp(id) {
                std::cmp::Ordering::Less => low = mid + 1,
                std::cmp::Ordering::Greater => high = mid,
                std::cmp::Ordering::Equal => return Some(mid),
            }
        }
        None
    }

    fn word(&self, at: usize) -> anyhow::Result<u32> {
        let b = self.bytes.get(at..at + 4).context("a pack index cut short")?;
        Ok(u32::from_be_bytes(b.try_into().expect("four bytes")))
    }

    /// Every object as (offset in the pack, place in the index), in pack order. Offsets
    /// past 2 GiB are in a table of 8-byte ones after the 4-byte ones.
    fn in_pack_order(&self) -> anyhow::Result<Vec<(u64, usize)>> {
        let offsets = IDS + self.count * 24;
        let large = offsets + self.count * 4;
        let mut found = Vec::with_capacity(self.count);
        for n in 0..self.count {
            let small = self.word(offsets + n * 4)?;
            let offset = if small & 0x8000_0000 == 0 {
                u64::from(small)
            } else {
                let at = large + (small & 0x7fff_ffff) as usize * 8;
                (u64::from(self.word(at)?) << 32) | u64::from(self.word(at + 4)?)
            };
            found.push((offset, n));
        }
        found.sort_unstable();
        Ok(found)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// git's own decoder (`packfile.c`, `get_delta_base`).
    fn decode(bytes: &[u8]) -> u64 {
        let mut value = u64::from(bytes[0] & 0x7f);
        for b in &bytes[1..] {
            value = ((value + 1) << 7) | u64::from(b & 0x7f);
        }
        value
    }

    #[test]
    fn offsets_are_encoded_as_git_decodes_them() {
        assert_eq!(offset_bytes(1), [1]);
        assert_eq!(offset_bytes(127), [127]);
        assert_eq!(offset_bytes(128), [0x80, 0]);
        for distance in [1, 127, 128, 129, 16_511, 16_512, 16_513, 1 << 20, (1 << 35) + 12_345] {
            let bytes = offset_bytes(distance);
            assert!(bytes[..bytes.len() - 1].iter().all(|b| b & 0x80 != 0));
            assert_eq!(bytes.last().unwrap() & 0x80, 0);
            assert_eq!(decode(&bytes), distance, "{bytes:?}");
        }
    }
}
