//! Runs a fixed list of prepared requests with N workers, each with its own
//! `reqwest::Client` (one kept-alive connection), and measures every request from send
//! to the last byte of the answer.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::Result;
use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HeaderMap, HeaderValue};
use reqwest::{Client, Method};

pub struct Req {
    pub method: Method,
    pub path: String,
    pub body: Option<String>,
    /// Request index that must have finished before this one starts (a page's parent).
    pub after: Option<usize>,
}

impl Req {
    pub fn get(path: String) -> Req {
        Req { method: Method::GET, path, body: None, after: None }
    }
    pub fn post(path: &str, body: serde_json::Value) -> Req {
        Req { method: Method::POST, path: path.to_owned(), body: Some(body.to_string()), after: None }
    }
    pub fn put(path: String, body: serde_json::Value) -> Req {
        Req { method: Method::PUT, path, body: Some(body.to_string()), after: None }
    }
}

/// Clients for the workers: one per worker, shared by the warm-up and the timed run so
/// connections are already open when timing starts.
pub fn clients(n: usize, token: &str) -> Result<Vec<Client>> {
    let mut h = HeaderMap::new();
    h.insert(AUTHORIZATION, HeaderValue::from_str(&format!("Bearer {token}"))?);
    // What MCP's Streamable HTTP asks of a client; other routes ignore it.
    h.insert(ACCEPT, HeaderValue::from_static("application/json, text/event-stream"));
    (0..n)
        .map(|_| {
            Ok(Client::builder()
                .default_headers(h.clone())
                .timeout(Duration::from_secs(60))
                .pool_max_idle_per_host(1)
                .tcp_nodelay(true)
                .build()?)
        })
        .collect()
}

#[derive(Clone, Debug, Default)]
pub struct Stats {
    pub count: usize,
    pub errors: usize,
    /// Latencies of the successful requests, milliseconds, sorted.
    pub latencies: Vec<f64>,
    pub wall_secs: f64,
    pub error_samples: Vec<String>,
    /// Bodies of successful answers, when asked for.
    pub bodies: Vec<(usize, String)>,
    /// Indices of the requests that succeeded, in order.
    pub ok: Vec<usize>,
    /// Requests not sent because the deadline had passed.
    pub skipped: usize,
}

impl Stats {
    pub fn pct(&self, p: f64) -> f64 {
        if self.latencies.is_empty() {
            return f64::NAN;
        }
        let rank = ((p / 100.0) * self.latencies.len() as f64).ceil() as usize;
        self.latencies[rank.clamp(1, self.latencies.len()) - 1]
    }
    pub fn mean(&self) -> f64 {
        if self.latencies.is_empty() {
            return f64::NAN;
        }
        self.latencies.iter().sum::<f64>() / self.latencies.len() as f64
    }
    pub fn max(&self) -> f64 {
        self.latencies.last().copied().unwrap_or(f64::NAN)
    }
    /// Requests done (successful or not) per second of wall-clock time.
    pub fn ops_per_sec(&self) -> f64 {
        if self.wall_secs > 0.0 { self.count as f64 / self.wall_secs } else { f64::NAN }
    }

    /// Runs made one after the other, as one: their latencies together, their
    /// wall-clock times added (bodies and request indices are left out).
    pub fn merged(parts: &[&Stats]) -> Stats {
        let mut all = Stats::default();
        for st in parts {
            all.count += st.count;
            all.errors += st.errors;
            all.skipped += st.skipped;
            all.wall_secs += st.wall_secs;
            all.latencies.extend(&st.latencies);
            all.error_samples.extend(st.error_samples.iter().take(5 - all.error_samples.len().min(5)).cloned());
        }
        all.latencies.sort_by(f64::total_cmp);
        all
    }
}

pub struct RunOpts {
    pub workers: usize,
    /// Keep answer bodies (for setup steps that read them).
    pub keep_bodies: bool,
    /// Stop starting new requests after this instant (setup only).
    pub deadline: Option<Instant>,
}

/// Sends every request in `reqs` once (no more: each loop is bounded by the list), with
/// `opts.workers` concurrent workers taking the next request in order.
pub async fn run(clients: &[Client], base: &str, reqs: Arc<Vec<Req>>, opts: RunOpts) -> Stats {
    let workers = opts.workers.clamp(1, clients.len());
    let next = Arc::new(AtomicUsize::new(0));
    let done: Arc<Vec<AtomicBool>> = Arc::new((0..reqs.len()).map(|_| AtomicBool::new(false)).collect());
    let start = Instant::now();
    let mut handles = Vec::with_capacity(workers);
    for client in clients.iter().take(workers) {
        let (client, base, reqs, next, done) =
            (client.clone(), base.to_owned(), reqs.clone(), next.clone(), done.clone());
        let (keep_bodies, deadline) = (opts.keep_bodies, opts.deadline);
        handles.push(tokio::spawn(async move {
            let mut st = Stats::default();
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= reqs.len() {
                    break;
                }
                if deadline.is_some_and(|d| Instant::now() >= d) {
                    st.skipped += 1;
                    done[i].store(true, Ordering::Release);
                    continue;
                }
                let r = &reqs[i];
                if let Some(dep) = r.after {
                    // The dependency was taken by a worker before this one (lower index),
                    // so it is in flight and ends within the client timeout.
                    while !done[dep].load(Ordering::Acquire) {
                        tokio::time::sleep(Duration::from_micros(500)).await;
                    }
                }
                let mut rb = client.request(r.method.clone(), format!("{base}{}", r.path));
                if let Some(b) = &r.body {
                    rb = rb.header(CONTENT_TYPE, "application/json").body(b.clone());
                }
                let t0 = Instant::now();
                let res = rb.send().await;
                let outcome = match res {
                    Ok(resp) => {
                        let status = resp.status();
                        match resp.text().await {
                            Ok(body) if status.is_success() => Ok(body),
                            Ok(body) => Err(format!("{} {} -> {status}: {}", r.method, r.path, trim(&body))),
                            Err(e) => Err(format!("{} {} -> {status}, body: {e}", r.method, r.path)),
                        }
                    }
                    Err(e) => Err(format!("{} {} -> {e}", r.method, r.path)),
                };
                let ms = t0.elapsed().as_secs_f64() * 1000.0;
                done[i].store(true, Ordering::Release);
                st.count += 1;
                match outcome {
                    Ok(body) => {
                        st.latencies.push(ms);
                        st.ok.push(i);
                        if keep_bodies {
                            st.bodies.push((i, body));
                        }
                    }
                    Err(e) => {
                        st.errors += 1;
                        if st.error_samples.len() < 5 {
                            st.error_samples.push(e);
                        }
                    }
                }
            }
            st
        }));
    }
    let mut all = Stats::default();
    for h in handles {
        let st = h.await.expect("worker panicked");
        all.count += st.count;
        all.errors += st.errors;
        all.skipped += st.skipped;
        all.latencies.extend(st.latencies);
        all.bodies.extend(st.bodies);
        all.ok.extend(st.ok);
        for e in st.error_samples {
            if all.error_samples.len() < 5 {
                all.error_samples.push(e);
            }
        }
    }
    all.wall_secs = start.elapsed().as_secs_f64();
    all.latencies.sort_by(f64::total_cmp);
    all.bodies.sort_by_key(|(i, _)| *i);
    all.ok.sort_unstable();
    all
}

fn trim(s: &str) -> String {
    let s = s.trim();
    if s.len() > 300 { format!("{}…", &s[..s.floor_char_boundary(300)]) } else { s.to_owned() }
}

/// The sampled error messages of a run, to stderr.
pub fn print_errors(st: &Stats) {
    for e in &st.error_samples {
        eprintln!("    error: {e}");
    }
}
