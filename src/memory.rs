//! Process-wide memory settings, made once at start, before any thread or repository.
//!
//! Measured on a server that had saved 10,000 pages (commit 7ce390a):
//! it stayed at ≈ 230 MiB resident, most of it memory already freed. Two
//! things held it:
//!
//! - glibc's malloc gives each thread that allocates an arena of its own (up to eight
//!   per core) and hands little of a fragmented arena back; Cairn has a thread per SQLite
//!   connection, tokio's workers and the blocking pool. Two arenas are plenty for two
//!   cores' worth of work.
//! - libgit2 caches every commit and tree it parses, up to 256 MiB by default; a save
//!   reads its parent commit and the trees on its path, so the cache grows with every
//!   save and is never trimmed below its limit (heaptrack: two thirds of the live heap
//!   after 3,000 saves).
//!
//! Measured again at the end of the bench's 10,000-page run (commit 17059fc),
//! the server held 99–166 MiB from run to run, and one more thing
//! held it: SQLite's page caches. Every pooled connection keeps up to 2 MiB of pages for
//! the database and as much for the search file it attaches, and 16 clients reading open
//! all 16 connections: SQLite held 27 MiB at the end, 45–48 MiB at its highest. A soft
//! limit on SQLite's heap ([`SQLITE_HEAP_BYTES`], for the whole process) makes a
//! connection reuse its least recently used pages rather than take more once SQLite as a
//! whole holds that much; a page not cached is read again from the system's file cache.
//! (At the limit SQLite also sorts more than ten pages' worth of rows through a temporary
//! file rather than in memory: the wiki's graph, read from all its links, is sorted so;
//! a list or a history sorts one page of results, under its `LIMIT`.)
//!
//! And what is freed goes back to the system: [`trim`] (after each packing pass, once a
//! minute) hands back the free pages inside the heap. (The pass itself, whose delta
//! search was the largest transient user, runs in a child process of its own since
//! e30142f: core/packing/process.rs.)
//!
//! Under a steady load (the soak bench: 16 clients reading, saving and searching for ten
//! minutes) the live heap stays flat (jemalloc's heap profile) while the heap glibc held
//! grew by 14 % after warm-up: glibc raises its threshold for `mmap`ed blocks to the
//! size of any such block freed, up to 32 MiB, so the larger blocks a request holds for a
//! moment came from the arenas after the first such free, and the free space they left
//! between longer-lived blocks was kept. With the threshold fixed at [`MMAP_THRESHOLD`]
//! (glibc's starting value) such blocks are mapped and unmapped whole: the soak's
//! anonymous memory grew 3.8 % instead of 14.3 % (1bb7f06, one run each), with the same
//! latencies and throughput. (At the end of the 10,000-page save bench a threshold fixed
//! at 1 MiB had made no difference the runs could tell.)

/// libgit2's object cache, for all repositories of the process together. Small objects
/// (commits, the trees on a page's path: tens of entries each) re-read from disk cost
/// microseconds, so a cache this size is about re-reading the hot ones, not holding the
/// history.
const GIT_CACHE_BYTES: isize = 4 << 20;

/// glibc arenas (the default is eight per core).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const MALLOC_ARENAS: libc::c_int = 2;

/// The size from which a block is `mmap`ed on its own, kept fixed (glibc starts at this
/// value and raises it at every free of a larger mapped block).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const MMAP_THRESHOLD: libc::c_int = 128 << 10;

/// SQLite's heap, all connections of the process together, past which their page caches
/// stop growing (`PRAGMA soft_heap_limit`; soft: a statement is never refused for it).
pub const SQLITE_HEAP_BYTES: i64 = 16 << 20;

/// Applies the settings. Called first thing in `main`, while the process has one thread.
pub(crate) fn configure() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets a parameter of glibc's allocator; called before any
    // other thread exists.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, MALLOC_ARENAS);
        libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD);
    }
    // SAFETY: libgit2's global options must not change while another thread uses
    // libgit2; no repository is open yet.
    if let Err(e) = unsafe { git2::opts::set_cache_max_size(GIT_CACHE_BYTES) } {
        eprintln!("cairn: cannot limit libgit2's object cache: {e}");
    }
}

/// libgit2's pack windows for `cairn import`: it reads one repository's pack from end to
/// end once, so small windows (8 MiB, 16 MiB mapped at most) keep the pack's pages from
/// adding up in the process's memory (on Obsidian's help repository: 62 → 27 MiB of
/// file-backed RSS). Called by the `import` command before it opens a repository.
pub(crate) fn configure_for_import() {
    // SAFETY: libgit2's global options must not change while another thread uses
    // libgit2; the import command has opened no repository yet.
    let set = unsafe {
        git2::opts::set_mwindow_size(IMPORT_WINDOW_BYTES)
            .and_then(|()| git2::opts::set_mwindow_mapped_limit(2 * IMPORT_WINDOW_BYTES))
    };
    if let Err(e) = set {
        eprintln!("cairn: cannot limit libgit2's pack windows: {e}");
    }
}

/// The size of one libgit2 pack window during `cairn import`.
const IMPORT_WINDOW_BYTES: usize = 8 << 20;

/// Hands the heap's free pages back to the system (glibc keeps them otherwise).
pub(crate) fn trim() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases memory glibc holds free; safe from any thread.
    unsafe {
        libc::malloc_trim(0);
    }
}
