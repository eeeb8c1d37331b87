//! How fast the machine itself is right now, measured beside each timed run.
//!
//! Machines here are shared: the same server binary's 16-client updates have gone from
//! 261 to 1,070 per second between two rounds a few minutes apart, and its lone creates
//! from 1.9 to 5.8 ms, with no other process in sight (the "other CPU" column near zero,
//! `/proc/stat`'s steal counter too). So a slow row could be the server or the machine.
//! Three fixed pieces of work, timed just before each timed run, tell which: the same
//! arithmetic on one thread (how much CPU a thread gets, and how fast), a chain of
//! dependent reads through memory no cache holds (what a neighbour on the same host
//! leaves of the memory system: the arithmetic runs in registers and cannot see that,
//! while the server's work is mostly pointer chasing), and small synced writes beside
//! the server's data directory (what a barrier costs the disk now). They are meant to
//! tell a slow machine from a slow server; how well they do is still being learnt
//! (bench/README.md).

use std::io::Write;
use std::path::Path;
use std::sync::OnceLock;
use std::time::Instant;

use anyhow::{Context, Result};

/// The probes' readings, in ms: medians of a few runs each.
#[derive(Clone, Copy, Debug, Default)]
pub struct Probe {
    /// One thread's fixed arithmetic (15–17 ms on 2026-12-02's machine when it was quiet,
    /// 18–28 ms while something else ran).
    pub cpu_ms: f64,
    /// A fixed number of dependent reads at random places in 64 MiB.
    pub memory_ms: f64,
    /// One 4 KiB write and its `fdatasync`.
    pub fsync_ms: f64,
    /// A directory and a file made in the repositories' `objects/` ([`create_ms`]).
    pub create_ms: f64,
}

/// Runs the probes, `dir` being the server's data directory (which holds the synced
/// file and the repositories). A probe that cannot run (no such directory) reads 0.
pub fn measure(dir: &Path) -> Probe {
    Probe {
        cpu_ms: median((0..5).map(|_| cpu_once()).collect()),
        memory_ms: median((0..5).map(|_| memory_once()).collect()),
        fsync_ms: fsync_ms(dir).unwrap_or(0.0),
        create_ms: create_ms(dir).unwrap_or(0.0),
    }
}

/// What a save does first in its repository's `objects/`, in ms: the most any of the
/// data directory's repositories takes (0 without any).
pub fn create_ms(data: &Path) -> Result<f64> {
    let mut most: f64 = 0.0;
    let Ok(repos) = std::fs::read_dir(data.join("workspaces")) else { return Ok(0.0) };
    for repo in repos {
        let objects = repo?.path().join("objects");
        if objects.is_dir() {
            most = most.max(create_cost_ms(&objects)?);
        }
    }
    Ok(most)
}

/// Slots of the memory probe's cycle: 64 MiB, more than the last-level cache of the
/// machines here, so nearly every read goes to memory.
const MEMORY_SLOTS: usize = 16 << 20;
/// Reads per probe: ≈ 20 ms at 100 ns each.
const MEMORY_READS: usize = 200_000;

/// One cycle through every slot in a random order (Sattolo's shuffle), made once: each
/// slot holds the next one's index, so every read waits for the one before.
fn memory_cycle() -> &'static [u32] {
    static CYCLE: OnceLock<Vec<u32>> = OnceLock::new();
    CYCLE.get_or_init(|| {
        let mut next: Vec<u32> = (0..MEMORY_SLOTS as u32).collect();
        let mut x: u64 = 0x2545_F491_4F6C_DD1D;
        for i in (1..MEMORY_SLOTS).rev() {
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            let j = (x.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 32) as usize % i;
            next.swap(i, j);
        }
        next
    })
}

fn memory_once() -> f64 {
    let cycle = memory_cycle();
    let t = Instant::now();
    let mut at = 0u32;
    for _ in 0..MEMORY_READS {
        at = cycle[at as usize];
    }
    std::hint::black_box(at);
    t.elapsed().as_secs_f64() * 1000.0
}

fn cpu_once() -> f64 {
    let t = Instant::now();
    // A chain of dependent multiplications and shifts (xorshift*): no memory traffic, no
    // instruction-level parallelism to hide a slower core.
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    for _ in 0..4_000_000 {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        x = x.wrapping_mul(0x2545_F491_4F6C_DD1D);
    }
    std::hint::black_box(x);
    t.elapsed().as_secs_f64() * 1000.0
}

/// The median cost, in ms, of what a save does first in `objects/` after packing: making
/// a directory (libgit2's `objects/xx/`, which packing removed) and a small file in it —
/// 64 times. ext4 places a new directory's inode, and its files', near its parent's,
/// where packing just freed thousands: on an ext4 without a journal, until the kernel
/// stops counting them as recently deleted (`recently_deleted` in `fs/ext4/ialloc.c`:
/// freed within the last minute, or five more while the inode's table block is not yet
/// written back), each new inode scans past them. A file made in `objects/` itself, as
/// this probe did before, did not see it.
///
/// The directories and files are left where they are (empty, named `.bench-probe-*`,
/// which neither git nor Cairn reads), never removed while the server runs: a probe that
/// removed its 128 inodes again freed them itself, and the next probes, and the saves,
/// scanned past those.
fn create_cost_ms(objects: &Path) -> Result<f64> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static MADE: AtomicU64 = AtomicU64::new(0);
    let mut times = Vec::with_capacity(64);
    for _ in 0..64 {
        let dir = objects.join(format!(".bench-probe-{}", MADE.fetch_add(1, Ordering::Relaxed)));
        let file = dir.join("probe");
        let t = Instant::now();
        std::fs::create_dir(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
        let made = std::fs::OpenOptions::new().write(true).create_new(true).open(&file);
        times.push(t.elapsed().as_secs_f64() * 1000.0);
        drop(made.with_context(|| format!("cannot create {}", file.display()))?);
    }
    Ok(median(times))
}

fn fsync_ms(dir: &Path) -> std::io::Result<f64> {
    let path = dir.join("bench-probe");
    let mut file = std::fs::File::create(&path)?;
    let block = [0x5au8; 4096];
    let mut times = Vec::with_capacity(9);
    for _ in 0..9 {
        let t = Instant::now();
        file.write_all(&block)?;
        file.sync_data()?;
        times.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    drop(file);
    std::fs::remove_file(&path)?;
    Ok(median(times))
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_probe_reads_a_time_and_leaves_no_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = measure(dir.path());
        assert!(p.cpu_ms > 0.0 && p.memory_ms > 0.0 && p.fsync_ms > 0.0, "{p:?}");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn the_creation_probe_times_each_repository_and_frees_no_inode() {
        let data = tempfile::tempdir().unwrap();
        assert_eq!(create_ms(data.path()).unwrap(), 0.0, "no repositories yet");
        let objects = data.path().join("workspaces/w.git/objects");
        std::fs::create_dir_all(&objects).unwrap();
        assert!(create_ms(data.path()).unwrap() > 0.0);
        assert!(create_ms(data.path()).unwrap() > 0.0, "a second probe makes new names");
        let made: Vec<_> = std::fs::read_dir(&objects).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(made.len(), 128, "each probe keeps its 64 directories");
        assert!(made.iter().all(|n| n.to_string_lossy().starts_with(".bench-probe-")), "{made:?}");
    }

    #[test]
    fn a_missing_directory_reads_zero() {
        let p = measure(Path::new("/nonexistent/cairn-bench-probe"));
        assert_eq!(p.fsync_ms, 0.0);
    }

    #[test]
    fn the_memory_cycle_visits_every_slot_once() {
        // Sattolo's shuffle makes one cycle: following it from any slot comes back only
        // after visiting all of them, so the probe's reads never settle into a cached loop.
        let cycle = memory_cycle();
        let (mut at, mut steps) = (cycle[0], 1usize);
        while at != 0 {
            at = cycle[at as usize];
            steps += 1;
        }
        assert_eq!(steps, MEMORY_SLOTS);
    }
}
