//! Markdown tables and JSON of the results.

use std::fmt::Write;

use cairn_bench::load::Stats;
use cairn_bench::numbers::{f0, f2, latency_cells, round2, round3, stats_json};
use cairn_bench::server::Backend;
use serde_json::{Value, json};

use crate::{RunResult, ScenarioResult};

pub fn run_markdown(r: &RunResult) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "\n### {}, {} pages\n", r.backend.name(), r.size);
    let _ = writeln!(
        s,
        "Setup: created {} of {} pages in {:.1} s ({:.1} pages/s; create p50 {} ms, p99 {} ms; {} errors{}). \
         History pages: {} updates in {:.1} s; {}. Data on disk after the run: {:.1} MiB; \
         after `cairn gc`: {:.1} MiB, of which repositories {:.1} MiB for {} commits ({:.2} KiB per save; \
         the timed scenarios' {} saves added {} KiB each). \
         Server RSS idle {:.1} MiB, after the timed scenarios {:.1} MiB ({:.1} anonymous, {:.1} file-backed, \
         of which removed packs still mapped {:.1}); a packing pass's own process at most {:.1} MiB. \
         Load average before/after: {} / {}. CPU during the run: {:.0} core-seconds busy on the machine, \
         of which the bench client {:.0}, the server {:.0}, PostgreSQL {:.0}, other processes {:.0}. Run took {:.1} min.\n",
        r.pages_created,
        r.size,
        r.setup.wall_secs,
        r.pages_created as f64 / r.setup.wall_secs,
        f2(r.setup.pct(50.0)),
        f2(r.setup.pct(99.0)),
        r.setup.errors,
        if r.setup.skipped > 0 {
            format!(", {} skipped: setup budget ran out", r.setup.skipped)
        } else {
            String::new()
        },
        r.history_prep.count,
        r.history_prep.wall_secs,
        r.history_check,
        r.data_bytes as f64 / 1_048_576.0,
        r.packed.data_bytes as f64 / 1_048_576.0,
        r.packed.repo_bytes as f64 / 1_048_576.0,
        r.packed.commits,
        r.packed.repo_bytes as f64 / 1024.0 / r.packed.commits.max(1) as f64,
        r.packed.commits.saturating_sub(r.setup_packed.commits),
        r.packed.kib_per_save_since(&r.setup_packed).map_or_else(|| "—".to_owned(), f2),
        r.rss_idle_kib as f64 / 1024.0,
        r.rss_end_kib as f64 / 1024.0,
        r.rss_end_parts.anon_kib as f64 / 1024.0,
        r.rss_end_parts.file_kib as f64 / 1024.0,
        r.rss_end_parts.removed_packs_kib as f64 / 1024.0,
        r.packing_peak_rss_kib as f64 / 1024.0,
        r.loadavg_before,
        r.loadavg_after,
        r.cpu.machine,
        r.cpu.bench,
        r.cpu.server,
        r.cpu.postgres,
        r.cpu_other,
        r.wall_secs / 60.0,
    );
    let _ = writeln!(
        s,
        "| operation | clients | count | errors | p50 ms | p95 ms | p99 ms | mean ms | max ms | ops/s | \
         server CPU ms/op | PostgreSQL CPU ms/op | other CPU | packing passes | probes ms | saves per batch |"
    );
    let _ = writeln!(s, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for sc in &r.scenarios {
        let st = &sc.stats;
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {:.2} | {:.2} | {:.0}%{} | {} | {:.1} / {:.1} / {:.2} / {:.3} → {:.3} | {} |",
            sc.op,
            sc.clients,
            st.count,
            st.errors,
            latency_cells(st),
            sc.cpu_ms_per_op.server,
            sc.cpu_ms_per_op.postgres,
            sc.other_cpu_share * 100.0,
            if sc.attempt > 1 { format!(" (try {})", sc.attempt) } else { String::new() },
            sc.packing_passes,
            sc.probe.cpu_ms,
            sc.probe.memory_ms,
            sc.probe.fsync_ms,
            sc.probe.create_ms,
            sc.create_ms_after,
            sc.batches.mean().map_or("–".to_owned(), |m| format!("{m:.1} ({})", sc.batches.count))
        );
    }
    let _ = writeln!(
        s,
        "\n(other CPU: share of both cores used, during the timed run, by processes other than the bench client, \
         the server and PostgreSQL; CPU ms/op: CPU time the server and PostgreSQL used during the timed run, per \
         operation; \"try N\": the run kept is the Nth, earlier ones were disturbed by other processes; packing \
         passes: passes of the server's packing worker that ended during the timed run; probes: the machine's own \
         speed just before the timed run — one thread's fixed arithmetic / dependent reads through 64 MiB / \
         one 4 KiB synced write / a directory and a file made in a repository's objects/, before → after the \
         timed run (high after packing freed thousands of inodes, on an ext4 without a journal); saves per batch: \
         saves per batch flushed during the timed run, and (in brackets) how many were flushed.)"
    );
    if r.server_log_problems > 0 {
        let _ = writeln!(s, "\nThe server logged {} warning/error lines during this run.", r.server_log_problems);
    }
    s
}

fn find<'a>(r: &'a RunResult, op: &str, clients: usize) -> Option<&'a Stats> {
    r.scenarios.iter().find(|s| s.op == op && s.clients == clients).map(|s| &s.stats)
}

/// For each backend: the largest size against the smallest, p50 and p99 of each
/// operation and client count.
pub fn ratios(results: &[RunResult]) -> Vec<(Backend, usize, usize, &ScenarioResult, &Stats, f64, f64)> {
    let mut out = Vec::new();
    let mut backends: Vec<Backend> = results.iter().map(|r| r.backend).collect();
    backends.dedup();
    for b in backends {
        let runs: Vec<&RunResult> = results.iter().filter(|r| r.backend == b).collect();
        let (Some(small), Some(large)) = (runs.iter().min_by_key(|r| r.size), runs.iter().max_by_key(|r| r.size))
        else {
            continue;
        };
        if small.size == large.size {
            continue;
        }
        for sc in &small.scenarios {
            if let Some(l) = find(large, &sc.op, sc.clients) {
                let p50 = l.pct(50.0) / sc.stats.pct(50.0);
                let p99 = l.pct(99.0) / sc.stats.pct(99.0);
                out.push((b, small.size, large.size, sc, l, p50, p99));
            }
        }
    }
    out
}

pub fn ratios_markdown(results: &[RunResult]) -> String {
    let rows = ratios(results);
    if rows.is_empty() {
        return String::new();
    }
    let mut s = String::from("\n### Growth with corpus size (large ÷ small)\n\n");
    let _ = writeln!(
        s,
        "| backend | operation | clients | p50 small → large ms | p50 ratio | p99 small → large ms | p99 ratio |"
    );
    let _ = writeln!(s, "|---|---|---:|---:|---:|---:|---:|");
    for (b, small, large, sc, l, p50, p99) in rows {
        let _ = writeln!(
            s,
            "| {} ({small}→{large}) | {} | {} | {} → {} | {}× | {} → {} | {}× |",
            b.name(),
            sc.op,
            sc.clients,
            f2(sc.stats.pct(50.0)),
            f2(l.pct(50.0)),
            f2(p50),
            f2(sc.stats.pct(99.0)),
            f2(l.pct(99.0)),
            f2(p99)
        );
    }
    s
}

/// The project's targets (SQLite, durability on), checked against every SQLite run.
pub fn targets_markdown(results: &[RunResult]) -> String {
    let sqlite: Vec<&RunResult> = results.iter().filter(|r| r.backend == Backend::Sqlite).collect();
    if sqlite.is_empty() {
        return String::new();
    }
    let mut s =
        String::from("\n### Targets (SQLite; latencies with 1 client, throughput with the concurrent clients)\n\n");
    let _ = writeln!(s, "| target | pages | measured | met? |");
    let _ = writeln!(s, "|---|---:|---:|---|");
    let mut line = |name: &str, size: usize, v: f64, ok: bool, unit: &str| {
        let v = if unit == "/s" { f0(v) } else { f2(v) };
        let _ = writeln!(s, "| {name} | {size} | {v}{unit} | {} |", if ok { "met" } else { "NOT met" });
    };
    for r in &sqlite {
        let conc = r.scenarios.iter().map(|s| s.clients).max().unwrap_or(1);
        if let Some(u) = find(r, "update", 1) {
            // The targets, which replaced the first bench's 3 / 15 ms.
            line("update p50 ≤ 2.5 ms", r.size, u.pct(50.0), u.pct(50.0) <= 2.5, " ms");
            line("update p99 ≤ 8 ms", r.size, u.pct(99.0), u.pct(99.0) <= 8.0, " ms");
        }
        for (op, floor, shown) in [("update", 1_000.0, "1,000"), ("create", 600.0, "600")] {
            if let Some(w) = find(r, op, conc).filter(|_| conc > 1) {
                let rate = w.ops_per_sec();
                line(&format!("≥ {shown} {op}s/s with {conc} clients"), r.size, rate, rate >= floor, "/s");
            }
        }
        if let Some(g) = find(r, "get", 1) {
            line("get p50 ≤ 0.5 ms", r.size, g.pct(50.0), g.pct(50.0) <= 0.5, " ms");
        }
        if let Some(g) = find(r, "get", conc) {
            line(
                &format!("≥ 10,000 gets/s with {conc} clients"),
                r.size,
                g.ops_per_sec(),
                g.ops_per_sec() >= 10_000.0,
                "/s",
            );
        }
        if let (Some(g), Some(m)) = (find(r, "get", 1), find(r, "mcp_get", 1)) {
            let ratio = m.pct(50.0) / g.pct(50.0);
            line("MCP get_page p50 ≤ 1.5× GET p50 (ratio)", r.size, ratio, ratio <= 1.5, "×");
        }
        if let Some(h) = find(r, "history", 1) {
            line("history (50 revisions) p50 ≤ 3 ms", r.size, h.pct(50.0), h.pct(50.0) <= 3.0, " ms");
        }
    }
    for (b, small, large, sc, _, p50, p99) in ratios(results) {
        if b != Backend::Sqlite {
            continue;
        }
        let worst = p50.max(p99);
        let _ = writeln!(
            s,
            "| {} ({} clients) grows ≤ 1.5× ({small}→{large}, p50 / p99) | {large} | {}× / {}× | {} |",
            sc.op,
            sc.clients,
            f2(p50),
            f2(p99),
            if worst <= 1.5 { "met" } else { "NOT met" }
        );
    }
    s
}

pub fn json(config: &Value, results: &[RunResult]) -> Value {
    let runs: Vec<Value> = results
        .iter()
        .map(|r| {
            json!({
                "backend": r.backend.name(), "size": r.size, "pages_created": r.pages_created,
                "setup": {
                    "pages_per_sec": round2(r.pages_created as f64 / r.setup.wall_secs),
                    "skipped": r.setup.skipped,
                    "create": stats_json(&r.setup),
                },
                "history_prep": stats_json(&r.history_prep),
                "history_check": r.history_check,
                "scenarios": r.scenarios.iter().map(|s| {
                    let mut v = stats_json(&s.stats);
                    v["op"] = json!(s.op);
                    v["clients"] = json!(s.clients);
                    v["other_cpu_share"] = round2(s.other_cpu_share);
                    v["server_cpu_ms_per_op"] = round2(s.cpu_ms_per_op.server);
                    v["postgres_cpu_ms_per_op"] = round2(s.cpu_ms_per_op.postgres);
                    v["attempt"] = json!(s.attempt);
                    v["packing_passes"] = json!(s.packing_passes);
                    v["probe_cpu_ms"] = round2(s.probe.cpu_ms);
                    v["probe_memory_ms"] = round2(s.probe.memory_ms);
                    v["probe_fsync_ms"] = round2(s.probe.fsync_ms);
                    v["probe_create_ms"] = round3(s.probe.create_ms);
                    v["probe_create_ms_after"] = round3(s.create_ms_after);
                    v["batches"] = json!(s.batches.count);
                    v["saves_per_batch"] = s.batches.mean().map_or(json!(null), round2);
                    v
                }).collect::<Vec<_>>(),
                "server_log_problems": r.server_log_problems,
                "data_bytes": r.data_bytes,
                "packed": {"data_bytes": r.packed.data_bytes, "repo_bytes": r.packed.repo_bytes, "commits": r.packed.commits},
                "setup_packed": {"data_bytes": r.setup_packed.data_bytes, "repo_bytes": r.setup_packed.repo_bytes,
                    "commits": r.setup_packed.commits},
                "kib_per_save_after_setup": r.packed.kib_per_save_since(&r.setup_packed).map(round2),
                "rss_kib": {"idle": r.rss_idle_kib, "after_scenarios": r.rss_end_kib,
                    "after_scenarios_anon": r.rss_end_parts.anon_kib, "after_scenarios_file": r.rss_end_parts.file_kib,
                    "after_scenarios_removed_packs": r.rss_end_parts.removed_packs_kib,
                    "packing_pass_peak": r.packing_peak_rss_kib},
                "export": {"bytes": r.export.bytes, "secs": round2(r.export.secs),
                    "rss_before_kib": r.export.rss_before_kib, "rss_peak_kib": r.export.rss_peak_kib},
                "loadavg_before": r.loadavg_before, "loadavg_after": r.loadavg_after,
                "cpu_secs": {"machine": round2(r.cpu.machine), "bench": round2(r.cpu.bench), "server": round2(r.cpu.server),
                    "postgres": round2(r.cpu.postgres), "other": round2(r.cpu_other)},
                "wall_secs": round2(r.wall_secs),
            })
        })
        .collect();
    let ratios: Vec<Value> = ratios(results)
        .into_iter()
        .map(|(b, small, large, sc, l, p50, p99)| {
            json!({
                "backend": b.name(), "op": sc.op, "clients": sc.clients, "small": small, "large": large,
                "p50_small_ms": round2(sc.stats.pct(50.0)), "p50_large_ms": round2(l.pct(50.0)), "p50_ratio": round2(p50),
                "p99_small_ms": round2(sc.stats.pct(99.0)), "p99_large_ms": round2(l.pct(99.0)), "p99_ratio": round2(p99),
            })
        })
        .collect();
    json!({ "config": config, "runs": runs, "ratios": ratios })
}
