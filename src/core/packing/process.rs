//! The worker's packing pass in a process of its own (`cairn pack-pass DIR`), as git runs
//! `git gc --auto` apart from the command that started it.
//!
//! A pass that folds a large pack reads every object of it and holds libgit2's pack
//! builder, its caches and the mapped pack for the pass's length: 40–60 MiB more at the
//! end of the bench's 10,000-page run, in a server that otherwise holds 90–100 MiB
//! (measured in commit b96af07); and what a long-lived process's
//! allocator got back from it came back in pieces. A child gives all of it back to the
//! system when it exits, and the server's own memory no longer depends on whether a fold
//! happens to be running.
//!
//! The child needs no settings, database or log: it packs one repository (it takes the
//! repository's packing lock itself, like any packer: `git/pack.rs`), prints what it did
//! as one line of JSON, and exits. It runs at the worker's lower priority. The server
//! stops it with SIGTERM, which it answers as a pass asked to stop (nothing removed or
//! named), and the kernel sends it the same signal should the thread that started it —
//! the server — end without asking (kill -9), so no pass outlives its server.

use std::path::Path;
use std::process::{ExitCode, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::Context;

use crate::git::pack::{self, PackReport, Stopped};

/// The sub-command the server runs a pass with (not listed in `cairn --help`).
pub const SUBCOMMAND: &str = "pack-pass";

/// The child's exit code for a pass asked to stop.
const STOPPED_CODE: u8 = 3;

/// How often the server looks at its stop flag while a pass runs: a shutdown waits at
/// most this long before the child is asked to stop.
const STOP_POLL: Duration = Duration::from_millis(50);

/// What a pass in a child did, and the most memory the child held.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub struct ChildPass {
    #[serde(flatten)]
    pub report: PackReport,
    /// The child's peak resident memory (KiB, from `getrusage`).
    pub peak_rss_kib: u64,
}

/// The child could not be started (no such program, no process left, /proc missing):
/// the caller may pack in its own process instead.
#[derive(Debug, thiserror::Error)]
#[error("cannot start the packing process {0}")]
pub struct CannotStart(String);

/// Runs a worker's pass over the repository at `dir` in a child process of `program`
/// (this binary). Setting `stop` asks the child to give up; the pass then answers
/// [`Stopped`], as an in-process pass would.
pub async fn pass(program: &Path, dir: &Path, stop: &AtomicBool) -> anyhow::Result<ChildPass> {
    let mut command = tokio::process::Command::new(program);
    command.arg0("cairn").arg(SUBCOMMAND).arg(dir).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    end_with_this_thread(&mut command);
    let child = command.spawn().map_err(|e| CannotStart(format!("{} {SUBCOMMAND}: {e}", program.display())))?;
    let pid = child.id().context("the packing process was reaped before it was awaited")?;
    let output = child.wait_with_output();
    tokio::pin!(output);
    let mut asked = false;
    let output = loop {
        tokio::select! {
            out = &mut output => break out?,
            () = tokio::time::sleep(STOP_POLL), if !asked => {
                if stop.load(Ordering::Relaxed) {
                    asked = true;
                    terminate(pid);
                }
            }
        }
    };
    if output.status.success() {
        return serde_json::from_slice(&output.stdout).context("the packing process answered no report");
    }
    if output.status.code() == Some(i32::from(STOPPED_CODE)) || (asked && killed_by_sigterm(&output.status)) {
        return Err(Stopped.into());
    }
    let said = String::from_utf8_lossy(&output.stderr);
    anyhow::bail!("the packing process failed ({}): {}", output.status, said.trim())
}

/// `cairn pack-pass DIR`: the child's side. Packs as the worker's pass does, prints a
/// [`ChildPass`] as JSON, and exits 0; [`STOPPED_CODE`] when asked to stop (SIGTERM);
/// 1 with the error on standard error when the pass failed.
pub fn child_main(dir: &Path) -> ExitCode {
    stop_on_sigterm();
    name_this_process();
    super::lower_priority();
    let report = if dir.join("objects").is_dir() {
        pack::pack(dir, false, &|| STOP.load(Ordering::Relaxed))
    } else {
        // A workspace deleted since the server looked: nothing to pack.
        Ok(PackReport::default())
    };
    match report {
        Ok(report) => {
            let done = ChildPass { report, peak_rss_kib: peak_rss_kib() };
            println!("{}", serde_json::to_string(&done).expect("a report serializes"));
            ExitCode::SUCCESS
        }
        Err(e) if e.is::<Stopped>() => ExitCode::from(STOPPED_CODE),
        Err(e) => {
            eprintln!("{e:#}");
            ExitCode::FAILURE
        }
    }
}

/// Set by SIGTERM in the child.
static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_sigterm(_: libc::c_int) {
    // An atomic store is all a signal handler may safely do here.
    STOP.store(true, Ordering::Relaxed);
}

fn stop_on_sigterm() {
    // SAFETY: the handler only stores to an atomic (async-signal-safe); installed while
    // the child has one thread.
    unsafe {
        libc::signal(libc::SIGTERM, on_sigterm as *const () as libc::sighandler_t);
    }
}

/// `cairn-pack` in `ps` and `top` (run as `/proc/self/exe`, it would show as `exe`).
fn name_this_process() {
    #[cfg(target_os = "linux")]
    // SAFETY: PR_SET_NAME copies at most 16 bytes from the NUL-terminated string.
    unsafe {
        libc::prctl(libc::PR_SET_NAME, c"cairn-pack".as_ptr());
    }
}

fn terminate(pid: u32) {
    // SAFETY: kill sends a signal to the child we started and have not reaped yet (its
    // output is still awaited), so the pid cannot have been reused.
    unsafe {
        libc::kill(pid as libc::pid_t, libc::SIGTERM);
    }
}

fn killed_by_sigterm(status: &std::process::ExitStatus) -> bool {
    use std::os::unix::process::ExitStatusExt;
    status.signal() == Some(libc::SIGTERM)
}

/// The most resident memory this process has held, in KiB.
fn peak_rss_kib() -> u64 {
    // SAFETY: getrusage fills the struct it is given.
    unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        if libc::getrusage(libc::RUSAGE_SELF, &mut usage) == 0 { usage.ru_maxrss.max(0) as u64 } else { 0 }
    }
}

/// Makes the kernel send the child SIGTERM when the thread that starts it ends — with
/// the server, killed or crashed (a tokio worker thread lives as long as the runtime).
/// Linux only; elsewhere a pass left behind finishes on its own, which is safe.
fn end_with_this_thread(command: &mut tokio::process::Command) {
    #[cfg(target_os = "linux")]
    {
        let parent = std::process::id() as libc::pid_t;
        // SAFETY: runs in the child between fork and exec, calling only prctl and getppid,
        // which are async-signal-safe.
        unsafe {
            command.pre_exec(move || {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                // The server may have ended before the line above: then nobody would
                // signal this child.
                if libc::getppid() != parent {
                    return Err(std::io::Error::other("the server ended"));
                }
                Ok(())
            });
        }
    }
}
