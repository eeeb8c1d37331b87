//! Packing workspace repositories (git/pack.rs, core/packing/, `cairn gc`): loose
//! objects go into a durable pack, small packs fold into larger ones (all into one for
//! `cairn gc`), nothing is ever lost — beside
//! concurrent saves, and when `cairn gc` is killed with SIGKILL at any moment.

use std::path::Path;
use std::time::Duration;

use crate::common::process::*;
use crate::common::*;
use cairn::testing::git::pack;
use serde_json::json;

/// Saves `n` updates spread over `pages` pages; answers the last content of each page.
async fn save_many(api: &Api, prefix: &str, pages: usize, n: usize) -> Vec<(String, String)> {
    let mut last = Vec::new();
    for p in 0..pages {
        let slug = format!("{prefix}-{p}");
        api.page(&slug, &format!("# {slug}\n\nfirst")).await;
        last.push((slug, String::new()));
    }
    for i in 0..n {
        let p = i % pages;
        let content = format!("# {prefix}-{p}\n\nsave {i}: {}\n", "words ".repeat(i % 40));
        let (s, body) = api.put(&format!("/api/pages/{prefix}-{p}"), json!({ "content": content })).await;
        assert_eq!(s, 200, "{body}");
        last[p].1 = content;
    }
    last
}

/// Every page reads back its last content, and its whole history with every revision's
/// content and diff.
async fn assert_all_readable(api: &Api, pages: &[(String, String)]) {
    for (slug, content) in pages {
        let (s, page) = api.get(&format!("/api/pages/{slug}")).await;
        assert_eq!(s, 200, "{page}");
        if !content.is_empty() {
            assert_eq!(page["content"], content.as_str(), "{slug}");
        }
        let (_, history) = api.get(&format!("/api/pages/{slug}/history?limit=500")).await;
        for entry in history["items"].as_array().unwrap() {
            let sha = entry["sha"].as_str().unwrap();
            let (s, rev) = api.get(&format!("/api/pages/{slug}/history/{sha}")).await;
            assert_eq!(s, 200, "{slug}@{sha}: {rev}");
            let (s, diff) = api.get(&format!("/api/pages/{slug}/history/{sha}/diff")).await;
            assert_eq!(s, 200, "{slug}@{sha} diff: {diff}");
        }
    }
}

fn loose(repo: &Path) -> usize {
    pack::loose_objects(repo).unwrap().len()
}

fn packs(repo: &Path) -> usize {
    pack::packs(repo).unwrap().len()
}

/// Objects in packs, as git counts them: an object in two packs counts twice.
fn in_packs(repo: &Path) -> usize {
    let out = git(repo, &["count-objects", "-v"]);
    out.lines().find_map(|l| l.strip_prefix("in-pack:")).unwrap().trim().parse().unwrap()
}

/// Deltas in the repository's packs, by how they name their base: (by offset, by id).
/// Read as git reads them: each object's offset from its index (`git show-index`), its
/// type from the three bits after the first byte's high bit.
fn deltas(repo: &Path) -> (usize, usize) {
    let (mut by_offset, mut by_id) = (0, 0);
    for pack in pack::packs(repo).unwrap() {
        let bytes = std::fs::read(&pack).unwrap();
        let index = std::fs::File::open(pack.with_extension("idx")).unwrap();
        let out = std::process::Command::new("git").arg("show-index").stdin(index).output().unwrap();
        assert!(out.status.success());
        for line in String::from_utf8(out.stdout).unwrap().lines() {
            let offset: usize = line.split(' ').next().unwrap().parse().unwrap();
            match (bytes[offset] >> 4) & 7 {
                6 => by_offset += 1,
                7 => by_id += 1,
                _ => {}
            }
        }
    }
    (by_offset, by_id)
}

#[tokio::test]
async fn packing_moves_loose_objects_into_one_pack_and_loses_nothing() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let api = srv.user("packer@x.io").await;
    let repo = srv.ctx.workspace_dir("packer");
    let pages = save_many(&api, "doc", 10, 80).await;
    let before = loose(&repo);
    assert!(before > pack::LOOSE_THRESHOLD, "{before} loose objects");
    let size_before = dir_size(&repo);

    // Due (past the threshold): the worker's pass packs it.
    let done = cairn::testing::packing::pack_due(&srv.ctx, &Default::default()).await.unwrap();
    let report = &done.iter().find(|(slug, _)| slug == "packer").unwrap().1;
    assert_eq!(report.loose_packed, before);
    assert_eq!(loose(&repo), 0);
    assert_eq!(packs(&repo), 1);
    assert_eq!(in_packs(&repo), before);
    assert_fsck(&repo);
    // Every delta names its base by offset (ofs_delta.rs), none by id as libgit2 writes.
    let (by_offset, by_id) = deltas(&repo);
    assert!(by_offset > 100 && by_id == 0, "{by_offset} deltas by offset, {by_id} by id");
    // The packed loose files wait aside until nobody is saving (`pack::HELD`); once they
    // go, what stays is mostly the emptied fan-out directories, 4 KiB each, at most 256
    // (a writer may be about to create a file in one, so they are left in place).
    assert!(repo.join(pack::HELD).is_dir());
    let quiet = std::time::Duration::ZERO;
    assert_eq!(pack::release_held(&repo, quiet, std::time::Duration::from_secs(3600)).unwrap(), before);
    assert!(!repo.join(pack::HELD).read_dir().unwrap().any(|_| true));
    assert!(dir_size(&repo) * 2 < size_before, "{} → {} bytes", size_before, dir_size(&repo));
    assert_all_readable(&api, &pages).await;

    // Not due: a few new loose objects, just written.
    let more = save_many(&api, "more", 2, 4).await;
    let done = cairn::testing::packing::pack_due(&srv.ctx, &Default::default()).await.unwrap();
    assert_eq!(done.iter().find(|(slug, _)| slug == "packer").unwrap().1, Default::default());
    assert!(loose(&repo) > 0);

    // Past the threshold again, with at least half as many objects as the pack holds:
    // the run folds that pack in (git's geometric roll-up), one pack holding each object
    // once.
    let more = [more, save_many(&api, "more2", 4, 70).await].concat();
    let (in_pack, new_loose) = (in_packs(&repo), loose(&repo));
    assert!(new_loose >= pack::LOOSE_THRESHOLD && new_loose * 2 >= in_pack, "{new_loose} loose, {in_pack} packed");
    let done = cairn::testing::packing::pack_due(&srv.ctx, &Default::default()).await.unwrap();
    let report = &done.iter().find(|(slug, _)| slug == "packer").unwrap().1;
    assert_eq!((report.loose_packed, report.packs_folded), (new_loose, 1));
    assert_eq!((loose(&repo), packs(&repo), in_packs(&repo)), (0, 1, in_pack + new_loose));
    assert_fsck(&repo);

    // Fewer than half as many: a second pack of exactly the new loose objects (the walk
    // that names them stops at the packed commits, so nothing packed is copied), and the
    // large pack is left as it is — a run rewrites only what is small.
    let large = pack::packs(&repo).unwrap();
    let more = [more, save_many(&api, "more3", 4, 60).await].concat();
    let (in_pack, new_loose) = (in_packs(&repo), loose(&repo));
    assert!(new_loose >= pack::LOOSE_THRESHOLD && new_loose * 2 < in_pack, "{new_loose} loose, {in_pack} packed");
    let done = cairn::testing::packing::pack_due(&srv.ctx, &Default::default()).await.unwrap();
    let report = &done.iter().find(|(slug, _)| slug == "packer").unwrap().1;
    assert_eq!((report.loose_packed, report.packs_folded), (new_loose, 0));
    assert_eq!((loose(&repo), packs(&repo), in_packs(&repo)), (0, 2, in_pack + new_loose));
    assert!(large[0].exists());
    assert_fsck(&repo);

    // `cairn gc`'s pass: everything into one pack, the old ones folded in.
    let all = in_packs(&repo);
    let done = cairn::testing::packing::pack_all(&srv.ctx).await.unwrap();
    let report = &done.iter().find(|(slug, _)| slug == "packer").unwrap().1;
    assert_eq!(report.packs_folded, 2);
    assert_eq!(in_packs(&repo), all);
    assert_eq!((loose(&repo), packs(&repo)), (0, 1));
    assert_fsck(&repo);
    let (by_offset, by_id) = deltas(&repo);
    assert!(by_offset > 100 && by_id == 0, "{by_offset} deltas by offset, {by_id} by id");
    assert_all_readable(&api, &pages).await;
    assert_all_readable(&api, &more).await;
    // Saves go on after packing, and git's own gc still works on the result.
    let after = save_many(&api, "after", 2, 6).await;
    git(&repo, &["gc", "--quiet"]);
    assert_fsck(&repo);
    assert_all_readable(&api, &after).await;
    srv.stop().await;
}

#[tokio::test]
async fn packing_beside_concurrent_saves_loses_no_acknowledged_save() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let api = srv.user("busy@x.io").await;
    let repo = srv.ctx.workspace_dir("busy");
    save_many(&api, "seed", 4, 8).await;
    // Four writers save while a packer packs and folds in a loop.
    let writers: Vec<_> = (0..4)
        .map(|w| {
            let api = api.clone();
            tokio::spawn(async move { save_many(&api, &format!("w{w}"), 3, 30).await })
        })
        .collect();
    let packer = {
        let repo = repo.clone();
        tokio::task::spawn_blocking(move || {
            let mut runs = 0;
            let deadline = std::time::Instant::now() + Duration::from_secs(120);
            while std::time::Instant::now() < deadline {
                pack::pack(&repo, runs % 3 == 2, &|| false).unwrap();
                runs += 1;
                std::thread::sleep(Duration::from_millis(20));
                if runs >= 40 {
                    break;
                }
            }
            runs
        })
    };
    let mut saved = Vec::new();
    for w in writers {
        saved.extend(w.await.unwrap());
    }
    assert!(packer.await.unwrap() > 0);
    pack::pack(&repo, true, &|| false).unwrap();
    assert_fsck(&repo);
    assert_all_readable(&api, &saved).await;
    srv.stop().await;
}

/// `cairn gc` killed with SIGKILL at different moments: the repository stays whole
/// (`git fsck --strict`), every page and revision reads back, and a later run finishes.
#[tokio::test]
async fn kill_9_during_cairn_gc_loses_nothing() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let api = srv.user("killed@x.io").await;
    let repo = srv.ctx.workspace_dir("killed");
    let mut pages = save_many(&api, "k", 12, 120).await;
    let vars = env.cli_vars();
    let vars: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (*k, v.as_str())).collect();
    for (round, delay_ms) in [5u64, 20, 40, 80, 150, 300].into_iter().enumerate() {
        // New loose objects each round, so every kill lands on real work.
        pages.extend(save_many(&api, &format!("r{round}"), 2, 10).await);
        let mut child = cairn(&vars).arg("gc").stdout(std::process::Stdio::null()).spawn().unwrap();
        std::thread::sleep(Duration::from_millis(delay_ms));
        let _ = child.kill(); // SIGKILL
        let _ = child.wait();
        assert_fsck(&repo);
        assert_all_readable(&api, &pages).await;
    }
    let (code, stdout, stderr) = run_to_end(&vars, &["gc"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let files: Vec<_> = std::fs::read_dir(repo.join("objects/pack")).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!((loose(&repo), packs(&repo)), (0, 1), "{stdout} {files:?}");
    assert_fsck(&repo);
    assert_all_readable(&api, &pages).await;
    srv.stop().await;
}

/// Space used on disk (blocks, as `du` counts): what a loose object costs is mostly its
/// 4 KiB block and inode, not its compressed bytes.
fn dir_size(dir: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    let mut total = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let meta = entry.metadata().unwrap();
        total += meta.blocks() * 512 + if meta.is_dir() { dir_size(&entry.path()) } else { 0 };
    }
    total
}

/// A packing run asked to stop (the server shutting down) gives up without removing or
/// naming anything — while objects are added, and after (libgit2's progress callback,
/// during the delta search) — and a later run packs everything.
#[tokio::test]
async fn a_packing_run_asked_to_stop_gives_up_and_loses_nothing() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let api = srv.user("stopped@x.io").await;
    let repo = srv.ctx.workspace_dir("stopped");
    let pages = save_many(&api, "s", 6, 60).await;
    let before = loose(&repo);
    assert!(before > 100, "{before} loose objects");
    let pack_files = pack::packs(&repo).unwrap();
    // `stop` answers true from its `at`-th question on: before the first object, half-way
    // through the walk's set-up (a question per loose object), half-way through adding
    // them (another per object), and once every object is in (the delta search's progress).
    for at in [0, before / 2, before + before / 2, 2 * before + 1] {
        let asked = std::sync::atomic::AtomicUsize::new(0);
        let stop = || asked.fetch_add(1, std::sync::atomic::Ordering::Relaxed) >= at;
        let err = pack::pack(&repo, false, &stop).expect_err("a stopped run answers an error");
        assert!(err.is::<pack::Stopped>(), "stop at {at}: {err:#}");
        assert_eq!(loose(&repo), before, "stop at {at}: loose objects removed");
        assert_eq!(pack::packs(&repo).unwrap(), pack_files, "stop at {at}: a pack was named");
        let pack_dir: Vec<String> = std::fs::read_dir(repo.join("objects/pack"))
            .map(|d| d.map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect())
            .unwrap_or_default();
        assert!(pack_dir.iter().all(|f| f.starts_with("pack-")), "stop at {at}: left behind {pack_dir:?}");
        assert_fsck(&repo);
    }
    let done = pack::pack(&repo, false, &|| false).unwrap();
    assert_eq!(done.loose_packed, before);
    assert_eq!(loose(&repo), 0);
    assert_fsck(&repo);
    assert_all_readable(&api, &pages).await;
    srv.stop().await;
}

/// A shutdown after a run's pack is written does not wait for the run to move ~100,000
/// packed loose files aside: the run stops part-way, with its pack durable and named, the
/// files it did not move still loose (and readable), and the next run packs them again.
#[tokio::test]
async fn a_run_stopped_after_its_pack_is_written_keeps_it_and_leaves_the_rest_loose() {
    let dir = loose_repo(3_000);
    let repo = dir.path().to_owned();
    let before = loose(&repo);
    // Asked to stop from the moment a pack is named: that is, while its loose files are
    // being moved aside.
    let stop = || packs(&repo) > 0;
    let done = pack::pack(&repo, false, &stop).expect("the pack is written before the stop");
    assert_eq!(done.loose_packed, before);
    assert_eq!(packs(&repo), 1);
    assert_eq!(loose(&repo), before, "the move aside stopped at once");
    assert_eq!(in_packs(&repo), before);
    assert_fsck(&repo);
    // The next run packs what stayed loose, and nothing is lost.
    pack::pack(&repo, false, &|| false).unwrap();
    assert_eq!(loose(&repo), 0);
    assert_fsck(&repo);
}

/// Bytes of a SQLite file with its write-ahead log.
fn with_log(file: &Path) -> u64 {
    let log = std::path::PathBuf::from(format!("{}-wal", file.display()));
    [file.to_owned(), log].iter().map(|f| std::fs::metadata(f).map(|m| m.len()).unwrap_or(0)).sum()
}

/// `cairn gc` also compacts SQLite's database and search index, but only while no server
/// runs on the data directory: beside a running one it says so and leaves both files as
/// they are; once it stopped, they shrink, and every page still reads back and is found.
/// On PostgreSQL, which keeps no database file here, it packs and says nothing more.
#[tokio::test]
async fn cairn_gc_compacts_the_database_only_while_no_server_runs() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let api = srv.user("compact@x.io").await;
    // Pages of thousands of distinct words made small: their rows give back overflow
    // pages, and their search entries are replaced.
    let mut seed: u64 = 7;
    let mut word = || {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        format!("w{:x}", seed >> 40)
    };
    let slugs: Vec<String> = (0..40).map(|i| format!("compact-{i}")).collect();
    for slug in &slugs {
        let words: Vec<String> = (0..1500).map(|_| word()).collect();
        api.page(slug, &format!("# {slug}\n\n{}", words.join(" "))).await;
    }
    for slug in &slugs {
        let (s, body) =
            api.put(&format!("/api/pages/{slug}"), json!({"content": format!("# {slug}\n\nsmall now")})).await;
        assert_eq!(s, 200, "{body}");
    }
    let token = api.pat().await;
    srv.stop().await;
    let vars = env.cli_vars();
    let vars: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let sqlite = backend() == "sqlite";
    let (db, search) = (env.dir.path().join("cairn.db"), env.search_file());

    let server = Proc::start(env.dir.path(), &env.db_url, &[]);
    let (code, stdout, stderr) = run_to_end(&vars, &["gc"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(!stdout.contains("compacted the"), "{stdout}");
    assert_eq!(stdout.contains("a server or another cairn command is using DATA_DIR"), sqlite, "{stdout}");
    assert_eq!(server.terminate(), 0);

    let before = (with_log(&db), with_log(&search));
    let (code, stdout, stderr) = run_to_end(&vars, &["gc"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(!stdout.contains("is using DATA_DIR"), "{stdout}");
    assert_eq!(stdout.contains("compacted the database from"), sqlite, "{stdout}");
    if sqlite {
        let after = (with_log(&db), with_log(&search));
        assert!(after.0 < before.0, "database {before:?} -> {after:?}");
        assert!(after.1 < before.1, "search index {before:?} -> {after:?}");
    }

    let srv = env.start(&[]).await;
    let api = srv.anon().with_bearer(&token);
    for slug in &slugs {
        let (s, page) = api.get(&format!("/api/pages/{slug}")).await;
        assert_eq!(s, 200, "{page}");
        assert_eq!(page["content"], format!("# {slug}\n\nsmall now"));
    }
    let (s, found) = api.get("/api/search?q=small").await;
    assert_eq!(s, 200, "{found}");
    assert_eq!(found["items"].as_array().unwrap().len(), slugs.len(), "{found}");
    srv.stop().await;
}

/// The other commands that write or copy the data directory (`reindex`, `backup`) hold
/// its lock too, so they never run beside gc's compaction: while the lock is held
/// exclusively (as gc holds it while compacting), each waits, and runs once it is free.
#[tokio::test]
async fn reindex_and_backup_wait_while_gc_compacts() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let api = srv.user("waits@x.io").await;
    api.page("kept", "# Kept\n\nstill here").await;
    srv.stop().await;
    let backup_dir = env.dir.path().join("backup");
    let vars = env.cli_vars();
    let vars: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let lock = std::fs::File::options()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(env.data_dir().join("cairn.lock"))
        .unwrap();
    let expected = ["reindexed ", "backed up "];
    for (args, said) in [vec!["reindex"], vec!["backup", backup_dir.to_str().unwrap()]].into_iter().zip(expected) {
        lock.try_lock().unwrap();
        let mut child = cairn(&vars)
            .args(&args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // The command says when it starts waiting for the lock (its stderr, read to the
        // end so that it never blocks on a full pipe); it is still waiting then.
        let stderr = child.stderr.take().unwrap();
        let (waiting, said_so) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::BufRead::lines(std::io::BufReader::new(stderr)).map_while(Result::ok) {
                if line.contains("is compacting the database") {
                    let _ = waiting.send(());
                }
            }
        });
        said_so.recv_timeout(Duration::from_secs(30)).expect("the command never said it waits for the lock");
        assert!(child.try_wait().unwrap().is_none(), "{args:?} ran while the lock was held");
        lock.unlock().unwrap();
        let out = tokio::task::spawn_blocking(move || child.wait_with_output().unwrap()).await.unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success() && stdout.contains(said), "{args:?}: {}: {stdout}", out.status);
    }
}

/// A bare repository of `n` loose blobs, versions of a few long pages (so the pass has
/// deltas to search for: seconds of work at a few thousand).
fn loose_repo(n: usize) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let repo = git2::Repository::init_bare(dir.path()).unwrap();
    let base: String = (0..600).map(|w| format!("word{} ", w * 7919 % 1013)).collect();
    for i in 0..n {
        repo.blob(format!("# page {}\n\n{base}\nedit {i}: {}\n", i % 50, "more ".repeat(i % 97)).as_bytes()).unwrap();
    }
    dir
}

/// Entries of a pack directory that are not a named pack (a temporary file left behind).
fn strays(repo: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(repo.join("objects/pack")) else { return Vec::new() };
    entries.map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).filter(|f| !f.starts_with("pack-")).collect()
}

/// The child processes of this one running a pass over `repo`.
fn pass_processes(repo: &Path) -> Vec<u32> {
    let me = std::process::id().to_string();
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            stat_field(pid, 1).as_ref() == Some(&me)
                && String::from_utf8_lossy(&cmdline).contains(&*repo.to_string_lossy())
        })
        .collect()
}

/// Whether a process has ended (gone, or a zombie nobody reaped yet).
fn ended(pid: u32) -> bool {
    stat_field(pid, 0).is_none_or(|state| state == "Z")
}

/// The `n`-th field of a process's `/proc/PID/stat` after its name (0: its state, 1: its
/// parent's id), while the process exists.
fn stat_field(pid: u32, n: usize) -> Option<String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit(')').next()?.split_whitespace().nth(n).map(str::to_owned)
}

/// The worker's pass runs in a child process (`cairn pack-pass`), named `cairn-pack`:
/// asked to stop, the child gives up with nothing removed or named, and the pass answers
/// `Stopped`; should the server's thread that started it end without asking (kill -9 of
/// the server), the kernel stops the child too; a pass left to run packs everything, and
/// reports the child's peak memory.
#[tokio::test]
async fn the_workers_pass_runs_in_a_child_process_that_ends_with_the_server() {
    use cairn::testing::packing::process;
    use std::sync::atomic::AtomicBool;
    let dir = loose_repo(8_000);
    let repo = dir.path().to_owned();
    let before = loose(&repo);
    let program = Path::new(BIN);

    // Asked to stop once it runs.
    let stop = AtomicBool::new(false);
    let pass = process::pass(program, &repo, &stop);
    tokio::pin!(pass);
    // (A whole pass takes 1.4 s here at 6,000 objects.)
    let started = tokio::time::timeout(Duration::from_millis(150), &mut pass).await;
    assert!(started.is_err(), "the pass ended within 150 ms: {started:?}");
    let pid = *pass_processes(&repo).first().expect("a child process packs");
    let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap();
    assert_eq!(comm.trim(), "cairn-pack");
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let err = tokio::time::timeout(Duration::from_secs(10), pass).await.expect("stops at once").unwrap_err();
    assert!(err.is::<pack::Stopped>(), "{err:#}");
    assert!(ended(pid));
    assert_eq!((loose(&repo), packs(&repo)), (before, 0));
    assert_eq!(strays(&repo), Vec::<String>::new());

    // The thread that started it ends without asking (the server killed): the kernel
    // sends the child SIGTERM, and it gives up the same way.
    let thread_repo = repo.clone();
    let pid = std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(async {
            let never = AtomicBool::new(false);
            let pass = process::pass(program, &thread_repo, &never);
            // Dropped unfinished: the child is not killed by the drop.
            assert!(tokio::time::timeout(Duration::from_millis(150), pass).await.is_err());
        });
        *pass_processes(&thread_repo).first().expect("the child outlives the dropped pass")
    })
    .join()
    .unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !ended(pid) {
        assert!(std::time::Instant::now() < deadline, "the pass outlived the thread that started it");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!((loose(&repo), packs(&repo)), (before, 0));
    assert_eq!(strays(&repo), Vec::<String>::new());

    // Left to run: everything packed, durable and whole.
    let done = process::pass(program, &repo, &AtomicBool::new(false)).await.unwrap();
    assert_eq!((done.report.loose_packed, done.report.objects), (before, before));
    assert!(done.peak_rss_kib > 1024, "peak {} KiB", done.peak_rss_kib);
    assert_eq!((loose(&repo), packs(&repo)), (0, 1));
    assert_fsck(&repo);
}

/// A server stopped while its packing worker runs a large pass stops within
/// `SHUTDOWN_GRACE_SECS`, whatever the pass is doing (a pass asked to stop gives up, and
/// the server waits for its workers no longer than the grace); the repository stays
/// sound and the next pass packs what this one left.
#[tokio::test]
async fn a_shutdown_during_a_large_pass_ends_within_the_grace() {
    let env = Env::new().await;
    let srv = env.start(&["--shutdown-grace-secs=2"]).await;
    let api = srv.user("grace@x.io").await;
    api.page("seed", "# Seed\n\nkept\n").await;
    let repo = srv.ctx.workspace_dir("grace");
    {
        let r = git2::Repository::open_bare(&repo).unwrap();
        let base: String = (0..400).map(|w| format!("word{} ", w * 7919 % 1013)).collect();
        for i in 0..20_000 {
            r.blob(format!("# page {}\n\n{base}\nedit {i}\n", i % 50).as_bytes()).unwrap();
        }
    }
    srv.ctx.test_hooks.pack_now.notify_one();
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while pass_processes(&repo).is_empty() {
        assert!(std::time::Instant::now() < deadline, "no pass started");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let started = std::time::Instant::now();
    srv.stop().await;
    let took = started.elapsed();
    assert!(took < Duration::from_secs(4), "the server took {took:?} to stop (grace 2 s)");
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !pass_processes(&repo).is_empty() {
        assert!(std::time::Instant::now() < deadline, "the pass outlived its server");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_fsck(&repo);
    pack::pack(&repo, false, &|| false).unwrap();
    assert_eq!(loose(&repo), 0);
    assert_fsck(&repo);
}
