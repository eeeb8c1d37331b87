//! Process-wide memory settings, made once at start, before any thread or repository.
//!
//! Measured on a server that had saved 10,000 pages (BENCHMARKS.md, issue 12, sixth
//! session): it stayed at ≈ 230 MiB resident, most of it memory already freed. Two
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
//! And what is freed goes back to the system: [`trim`] (after each packing pass, whose
//! delta search is the largest transient user) hands back the free pages inside the
//! heap. (glibc's threshold for `mmap`ed blocks is left to adapt: a fixed one would map
//! and unmap every large block a save uses for a moment, such as zlib's compressor
//! state, at each use.)

/// libgit2's object cache, for all repositories of the process together. Small objects
/// (commits, the trees on a page's path: tens of entries each) re-read from disk cost
/// microseconds, so a cache this size is about re-reading the hot ones, not holding the
/// history.
const GIT_CACHE_BYTES: isize = 4 << 20;

/// glibc arenas (the default is eight per core).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const MALLOC_ARENAS: libc::c_int = 2;

/// Applies the settings. Called first thing in `main`, while the process has one thread.
pub fn configure() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets a parameter of glibc's allocator; called before any
    // other thread exists.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, MALLOC_ARENAS);
    }
    // SAFETY: libgit2's global options must not change while another thread uses
    // libgit2; no repository is open yet.
    if let Err(e) = unsafe { git2::opts::set_cache_max_size(GIT_CACHE_BYTES) } {
        eprintln!("cairn: cannot limit libgit2's object cache: {e}");
    }
}

/// Hands the heap's free pages back to the system (glibc keeps them otherwise).
pub fn trim() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases memory glibc holds free; safe from any thread.
    unsafe {
        libc::malloc_trim(0);
    }
}
