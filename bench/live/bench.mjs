// Co-editing benchmark: drives a running Cairn server's `GET /api/pages/{slug}/live`
// with independent Yjs clients (the `yjs` package, y-protocols sync + awareness over `ws`)
// and measures the three figures of the co-editing issue:
//
//   1. propagation: EDITORS clients type into one page; the time from an editor sending
//      an insert to its arrival (applied) at each other editor, over every
//      (sender, receiver) pair, plus one fixed pair (editor 0 → editor 1);
//   2. memory: the server's RSS before and after IDLE idle sessions, one connection on
//      each of IDLE pages (everything a session and its connection hold, the first time
//      the process holds that many);
//   3. saves: SAVE_CLIENTS HTTP clients `PUT`ting their own pages, in ROUNDS pairs of
//      rounds without and with the idle sessions open, ordered without, with | with,
//      without | without, with … so that a steady drift (everything grows with each save)
//      falls on both alike — exactly so for an even ROUNDS; an odd one leaves one round
//      of drift between the medians. The idle sessions are closed for the rounds without
//      and opened again for the next with; the same pause comes before every round.
//
// Each phase also reports the cores busy meanwhile: the server's, this client's and
// everything else's. On a shared machine "other" tells a disturbed phase.
//
// Started by run.sh, which starts the server and passes it in the environment:
// CAIRN_BASE (http://host:port), CAIRN_TOKEN (a personal access token), CAIRN_PID (the
// server's pid, for /proc). Progress goes to stderr, a Markdown table to stdout, the
// figures as JSON to --out.

import fs from 'node:fs';
import http from 'node:http';
import { performance, monitorEventLoopDelay } from 'node:perf_hooks';
import { parseArgs } from 'node:util';

import WebSocket from 'ws';
import * as Y from 'yjs';
import * as sync from 'y-protocols/sync';
import * as awarenessProtocol from 'y-protocols/awareness';
import * as encoding from 'lib0/encoding';
import * as decoding from 'lib0/decoding';

const { values: opt } = parseArgs({
  options: {
    editors: { type: 'string', default: '20' },
    seconds: { type: 'string', default: '30' }, // typing time
    'warm-up': { type: 'string', default: '2' }, // first seconds of typing not counted
    idle: { type: 'string', default: '200' },
    'text-bytes': { type: 'string', default: '3000' }, // each idle page's text
    'save-clients': { type: 'string', default: '16' },
    'save-seconds': { type: 'string', default: '10' }, // each round
    rounds: { type: 'string', default: '4' }, // pairs of save rounds (even: drift cancels)
    out: { type: 'string' },
  },
});
const EDITORS = Number(opt.editors);
const TYPING_MS = Number(opt.seconds) * 1000;
const WARM_UP_MS = Number(opt['warm-up']) * 1000;
const IDLE = Number(opt.idle);
const TEXT_BYTES = Number(opt['text-bytes']);
const SAVE_CLIENTS = Number(opt['save-clients']);
const SAVE_MS = Number(opt['save-seconds']) * 1000;
const ROUNDS = Number(opt.rounds);
const SETTLE_MS = 3000; // before a memory reading, twice before each save round

const BASE = process.env.CAIRN_BASE;
const TOKEN = process.env.CAIRN_TOKEN;
const PID = process.env.CAIRN_PID;
if (!BASE || !TOKEN || !PID) throw new Error('CAIRN_BASE, CAIRN_TOKEN and CAIRN_PID must be set (run.sh sets them)');
// `serve` backgrounds the binary itself; make sure the pid is the server, not a shell.
const comm = fs.readFileSync(`/proc/${PID}/comm`, 'utf8').trim();
if (!comm.startsWith('cairn')) throw new Error(`pid ${PID} is '${comm}', not the cairn server`);

const log = (...a) => console.error('[live]', ...a);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// ---------------------------------------------------------------- the server, from /proc

/** The server's resident memory, in KiB. */
function rssKiB() {
  const status = fs.readFileSync(`/proc/${PID}/status`, 'utf8');
  return Number(/^VmRSS:\s+(\d+) kB/m.exec(status)[1]);
}

/** The server's CPU time so far, in seconds (user + system; Linux's USER_HZ is 100). */
function cpuSeconds() {
  // The command name may hold spaces: the fields after it start after the last ')'.
  const stat = fs.readFileSync(`/proc/${PID}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime (fields 14, 15)
}

/** Every core's busy time so far, in seconds (all processes; /proc/stat's first line). */
function machineBusySeconds() {
  const [, user, nice, system, idle, iowait, ...rest] = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].split(/\s+/).map(Number);
  return (user + nice + system + rest.slice(0, 3).reduce((a, b) => a + b, 0)) / 100; // + irq, softirq, steal
}

/**
 * Runs `fn` and answers its result with the cores busy meanwhile: the server's, this
 * client's, and everything else's (other processes — a packing pass runs in a child of
 * the server and counts here — or a noisy neighbour: a phase with much of it is disturbed).
 */
async function withCpu(fn) {
  const [server0, busy0, client0, t0] = [cpuSeconds(), machineBusySeconds(), process.cpuUsage(), performance.now()];
  const result = await fn();
  const seconds = (performance.now() - t0) / 1000;
  const server = (cpuSeconds() - server0) / seconds;
  const clientUsage = process.cpuUsage(client0);
  const client = (clientUsage.user + clientUsage.system) / 1e6 / seconds;
  const other = Math.max(0, (machineBusySeconds() - busy0) / seconds - server - client);
  return { result, cpu: { server, client, other } };
}

// ---------------------------------------------------------------- HTTP

/** One JSON request with the bearer token; answers { status, body } (body parsed when JSON). */
function api(method, path, body, agent) {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : JSON.stringify(body);
    const headers = { authorization: `Bearer ${TOKEN}` };
    if (data !== undefined) Object.assign(headers, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) });
    const req = http.request(BASE + path, { method, headers, agent }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString();
        let parsed = text;
        if ((res.headers['content-type'] || '').includes('json')) parsed = JSON.parse(text);
        resolve({ status: res.statusCode, body: parsed });
      });
    });
    req.on('error', reject);
    req.end(data);
  });
}

async function createPage(title, content) {
  const res = await api('POST', '/api/pages', { title, content });
  if (res.status >= 300) throw new Error(`POST /api/pages ${title}: ${res.status} ${JSON.stringify(res.body)}`);
  return { slug: res.body.slug, revision: res.body.revision, content };
}

/** A page text of about `bytes` ASCII bytes (so bytes = characters). */
function pageText(title, bytes) {
  let text = `# ${title}\n\n`;
  while (text.length < bytes) text += 'Some words of a page about restarting the service gently. ';
  return text.slice(0, bytes);
}

// ---------------------------------------------------------------- a Yjs client

const MESSAGE_SYNC = 0;
const MESSAGE_AWARENESS = 1;

/** Connections the server closed (or that failed) without our asking: a finding. */
const unexpected = [];

/**
 * One person in a page's session: a Y.Doc and its awareness, kept in step over a
 * WebSocket the way y-websocket does (SyncStep1 on open; updates and local awareness
 * sent as they happen).
 */
class Peer {
  constructor(slug, name) {
    this.slug = slug;
    this.name = name;
    this.doc = new Y.Doc();
    this.text = this.doc.getText('markdown');
    this.awareness = new awarenessProtocol.Awareness(this.doc);
    this.pendingAcks = []; // resolvers waiting for a SyncStep2 (see ack())
    this.closing = false;
    this.onRemoteUpdate = null; // set by the propagation test
    // Local edits go out as Update messages; remote ones arrive with the socket as origin.
    this.doc.on('update', (update, origin) => {
      if (origin === this.ws) {
        this.onRemoteUpdate?.();
        return;
      }
      const e = encoding.createEncoder();
      encoding.writeVarUint(e, MESSAGE_SYNC);
      sync.writeUpdate(e, update);
      this.send(encoding.toUint8Array(e));
    });
    // Local presence (our name, our cursor, the 15 s renewal) goes out too.
    this.awareness.on('update', ({ added, updated, removed }, origin) => {
      if (origin !== 'local') return;
      const e = encoding.createEncoder();
      encoding.writeVarUint(e, MESSAGE_AWARENESS);
      encoding.writeVarUint8Array(e, awarenessProtocol.encodeAwarenessUpdate(this.awareness, added.concat(updated, removed)));
      this.send(encoding.toUint8Array(e));
    });
  }

  send(bytes) {
    if (this.ws?.readyState === WebSocket.OPEN) this.ws.send(bytes);
  }

  /** Opens the session; resolves once the server's SyncStep2 brought its text. */
  connect() {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(`${BASE.replace(/^http/, 'ws')}/api/pages/${this.slug}/live`, {
        headers: { authorization: `Bearer ${TOKEN}` },
      });
      this.ws = ws;
      const timer = setTimeout(() => reject(new Error(`${this.name}: not synced after 30 s`)), 30_000);
      this.pendingAcks.push(() => {
        clearTimeout(timer);
        resolve();
      });
      ws.on('unexpected-response', (_req, res) => {
        clearTimeout(timer);
        reject(new Error(`${this.name}: upgrade answered ${res.statusCode}`));
      });
      ws.on('open', () => {
        const e = encoding.createEncoder();
        encoding.writeVarUint(e, MESSAGE_SYNC);
        sync.writeSyncStep1(e, this.doc);
        this.send(encoding.toUint8Array(e));
        this.awareness.setLocalStateField('user', { name: this.name, color: '#30bced' });
      });
      ws.on('message', (data) => this.receive(new Uint8Array(data.buffer, data.byteOffset, data.byteLength)));
      ws.on('close', (code, reason) => {
        if (!this.closing) unexpected.push({ peer: this.name, code, reason: reason.toString() });
      });
      ws.on('error', (err) => {
        if (!this.closing) unexpected.push({ peer: this.name, error: err.message });
        clearTimeout(timer);
        reject(err);
      });
    });
  }

  /** A frame holds one or more messages (the server's first: SyncStep1 + awareness). */
  receive(frame) {
    const d = decoding.createDecoder(frame);
    while (decoding.hasContent(d)) {
      const kind = decoding.readVarUint(d);
      if (kind === MESSAGE_SYNC) {
        const reply = encoding.createEncoder();
        encoding.writeVarUint(reply, MESSAGE_SYNC);
        const type = sync.readSyncMessage(d, reply, this.doc, this.ws);
        // A SyncStep1 from the server is answered by our SyncStep2.
        if (encoding.length(reply) > 1) this.send(encoding.toUint8Array(reply));
        // A SyncStep2 answers our SyncStep1: everything we sent before it is stored.
        if (type === sync.messageYjsSyncStep2) this.pendingAcks.shift()?.();
      } else if (kind === MESSAGE_AWARENESS) {
        awarenessProtocol.applyAwarenessUpdate(this.awareness, decoding.readVarUint8Array(d), this.ws);
      } else {
        unexpected.push({ peer: this.name, error: `unknown message kind ${kind}` });
        return;
      }
    }
  }

  /** Resolves once the server has stored every update this client sent so far. */
  ack() {
    return new Promise((resolve) => {
      this.pendingAcks.push(resolve);
      const e = encoding.createEncoder();
      encoding.writeVarUint(e, MESSAGE_SYNC);
      sync.writeSyncStep1(e, this.doc);
      this.send(encoding.toUint8Array(e));
    });
  }

  close() {
    this.closing = true;
    this.awareness.destroy(); // stops its renewal timer
    this.ws?.close(1000);
  }
}

/** Opens peers `batch` at a time (a burst of hundreds of upgrades is no idle session). */
async function connectAll(peers, batch = 20) {
  for (let i = 0; i < peers.length; i += batch) await Promise.all(peers.slice(i, i + batch).map((p) => p.connect()));
}

// ---------------------------------------------------------------- figures

/** Nearest-rank percentile of sorted numbers. */
const pct = (sorted, p) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] : NaN);
const summary = (xs) => {
  const s = Float64Array.from(xs).sort();
  return { n: s.length, p50: pct(s, 50), p95: pct(s, 95), p99: pct(s, 99), max: s.length ? s[s.length - 1] : NaN };
};
const median = (xs) => {
  const s = Float64Array.from(xs).sort();
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const r = (x, d = 1) => Number(x.toFixed(d));

// ---------------------------------------------------------------- 1. propagation

/**
 * EDITORS peers type into one page, each at the end of its own line, one character
 * every 100–200 ms, with its cursor in its awareness as an editor shows it. All run in
 * this process on one clock: an insert's send time is kept per (editor, Yjs clock), and
 * each receiver, on applying a remote update, looks up which clocks of which editors it
 * just gained. Inserts sent in the warm-up are not counted.
 */
async function propagation() {
  let text = '# Typing together\n\n';
  for (let i = 0; i < EDITORS; i++) text += `Editor ${String(i).padStart(2, '0')}: \n`;
  const page = await createPage('Typing together', text);
  const editors = Array.from({ length: EDITORS }, (_, i) => new Peer(page.slug, `Editor ${i}`));
  await connectAll(editors);
  log(`${EDITORS} editors joined ${page.slug}`);

  const t0 = performance.now();
  const countFrom = t0 + WARM_UP_MS;
  const all = []; // every counted (sender, receiver) delay, ms
  const pair = []; // editor 0 → editor 1 only
  const worst = []; // the longest delay of the inserts sent in each second of typing: when stalls happened
  for (const [i, ed] of editors.entries()) {
    ed.index = i;
    ed.sentAt = []; // by Yjs clock: each insert is one character, one clock
    ed.seen = new Map(); // other editor → its clock this doc has reached
    const line = `Editor ${String(i).padStart(2, '0')}: `;
    // The editor's caret: just before its line's newline, as a relative position so it
    // stays there whatever the others insert before it.
    const nl = ed.text.toString().indexOf('\n', ed.text.toString().indexOf(line));
    ed.caret = Y.createRelativePositionFromTypeIndex(ed.text, nl);
    ed.onRemoteUpdate = () => {
      const now = performance.now();
      for (const other of editors) {
        if (other === ed) continue;
        const reached = Y.getState(ed.doc.store, other.doc.clientID);
        for (let c = ed.seen.get(other) ?? 0; c < reached; c++) {
          const sent = other.sentAt[c];
          if (sent === undefined || sent < countFrom) continue;
          all.push(now - sent);
          const second = Math.floor((sent - t0) / 1000);
          worst[second] = Math.max(worst[second] ?? 0, now - sent);
          if (other.index === 0 && i === 1) pair.push(now - sent);
        }
        ed.seen.set(other, reached);
      }
    };
  }

  const letters = 'the quick brown fox jumps over the lazy dog ';
  let typed = 0;
  let counted = 0;
  const loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
  const typing = (ed) =>
    new Promise((done) => {
      let n = 0;
      const key = () => {
        if (performance.now() - t0 >= TYPING_MS) return done();
        const at = Y.createAbsolutePositionFromRelativePosition(ed.caret, ed.doc).index;
        const clock = Y.getState(ed.doc.store, ed.doc.clientID);
        const now = performance.now();
        ed.sentAt[clock] = now; // the update handler sends it within this call
        ed.text.insert(at, letters[n++ % letters.length]);
        typed++;
        if (now >= countFrom) counted++;
        // The cursor moved: an editor (y-codemirror) publishes it in its awareness.
        const cursor = Y.relativePositionToJSON(Y.createRelativePositionFromTypeIndex(ed.text, at + 1));
        ed.awareness.setLocalStateField('cursor', { anchor: cursor, head: cursor });
        setTimeout(key, 100 + Math.random() * 100);
      };
      setTimeout(key, Math.random() * 200); // editors do not type in lockstep
    });
  const { cpu } = await withCpu(() => Promise.all(editors.map(typing)));
  loop.disable();
  log(`typed ${typed} characters; waiting for acknowledgements and convergence`);

  // Every editor's updates stored (the protocol's acknowledgement), then the same text everywhere.
  await Promise.all(editors.map((ed) => ed.ack()));
  let converged = false;
  for (let i = 0; i < 50 && !converged; i++) {
    converged = editors.every((ed) => ed.text.toString() === editors[0].text.toString());
    if (!converged) await sleep(100);
  }
  const finalText = editors[0].text.toString();

  // The last one out has the text saved as a revision.
  const left = performance.now();
  editors.forEach((ed) => ed.close());
  let savedAfterMs = null;
  for (let i = 0; i < 150; i++) {
    const raw = await api('GET', `/api/pages/${page.slug}/raw`);
    if (raw.status === 200 && raw.body === finalText) {
      savedAfterMs = performance.now() - left;
      break;
    }
    await sleep(100);
  }

  const expected = counted * (EDITORS - 1);
  return {
    editors: EDITORS,
    typing_seconds: TYPING_MS / 1000,
    warm_up_seconds: WARM_UP_MS / 1000,
    inserts_typed: typed,
    inserts_counted: counted,
    deliveries_expected: expected,
    deliveries_measured: all.length,
    all_pairs_ms: summary(all),
    editor0_to_editor1_ms: summary(pair),
    worst_ms_by_second: Array.from(worst, (x) => (x === undefined ? null : r(x))),
    converged,
    final_text_bytes: Buffer.byteLength(finalText),
    saved_after_leaving_ms: savedAfterMs,
    cpu_cores: cpu,
    client_event_loop_delay_ms: { p50: loop.percentile(50) / 1e6, p99: loop.percentile(99) / 1e6, max: loop.max / 1e6 },
  };
}

// ---------------------------------------------------------------- 3. saves

/**
 * SAVE_CLIENTS clients each `PUT` their own page in a loop for SAVE_MS, each save
 * changing its last line and naming the revision the previous one answered.
 */
async function saves(pages, label) {
  // A fresh agent per run: the server closes keep-alive connections idle for 10 s, and a
  // reused one it just closed would fail the first request.
  const agent = new http.Agent({ keepAlive: true, maxSockets: pages.length });
  const delays = [];
  const failures = {};
  let ok = 0;
  const t0 = performance.now();
  const { cpu } = await withCpu(() =>
    Promise.all(
      pages.map(async (p, i) => {
        while (performance.now() - t0 < SAVE_MS) {
          const s = performance.now();
          const res = await api('PUT', `/api/pages/${p.slug}`, { content: `${p.content}\nSave ${++p.n} by client ${i}.\n`, base_revision: p.revision }, agent);
          if (res.status === 200) {
            ok++;
            p.revision = res.body.revision;
            delays.push(performance.now() - s);
          } else {
            failures[res.status] = (failures[res.status] ?? 0) + 1;
            if (res.status === 409) p.revision = res.body.current_revision ?? p.revision;
          }
        }
      }),
    ),
  );
  const seconds = (performance.now() - t0) / 1000;
  agent.destroy();
  const run = { label, clients: pages.length, seconds: r(seconds, 2), saves: ok, saves_per_s: ok / seconds, latency_ms: summary(delays), failures, cpu_cores: cpu };
  log(`saves ${label}: ${r(run.saves_per_s)}/s, p50 ${r(run.latency_ms.p50, 2)} ms, failures ${JSON.stringify(failures)}`);
  return run;
}

// ---------------------------------------------------------------- the run

async function main() {
  // Propagation first, on a fresh server: what the save runs leave behind (loose objects
  // for the packing worker to pack, then unlink once saves stop; core/packing) cannot
  // fall into the typing.
  log(`propagation: ${EDITORS} editors for ${TYPING_MS / 1000} s`);
  const prop = await propagation();

  log(`setting up: ${SAVE_CLIENTS} pages to save, ${IDLE} pages of ${TEXT_BYTES} bytes to keep open`);
  const savePages = [];
  for (let i = 0; i < SAVE_CLIENTS; i++) {
    const p = await createPage(`Save target ${i}`, pageText(`Save target ${i}`, TEXT_BYTES));
    savePages.push({ ...p, n: 0 });
  }
  const idlePages = [];
  for (let i = 0; i < IDLE; i++) idlePages.push(await createPage(`Idle page ${i}`, pageText(`Idle page ${i}`, TEXT_BYTES)));
  const idleTextBytes = idlePages.reduce((sum, p) => sum + Buffer.byteLength(p.content), 0);

  // 2 and 3. Save rounds; before each, a pause for the last round's saves to settle, the
  // idle sessions opened or closed as the round needs, and a pause for that to settle.
  // Their first opening is the memory figure, their first closing the RSS after closing.
  const order = Array.from({ length: ROUNDS }, (_, i) => (i % 2 ? [true, false] : [false, true])).flat();
  let idle = null; // the idle sessions' peers while they are open
  let memory = null;
  const runs = [];
  for (const [i, withIdle] of order.entries()) {
    await sleep(SETTLE_MS);
    const rss = rssKiB();
    if (withIdle && !idle) {
      idle = idlePages.map((p, j) => new Peer(p.slug, `Idle ${j}`));
      await connectAll(idle);
      log(`${IDLE} idle sessions open`);
    } else if (!withIdle && idle) {
      idle.forEach((p) => p.close());
      idle = null;
    }
    await sleep(SETTLE_MS);
    if (withIdle && !memory) {
      memory = {
        sessions: IDLE,
        text_bytes_each: TEXT_BYTES,
        text_bytes_total: idleTextBytes,
        rss_before_kib: rss,
        rss_after_kib: rssKiB(),
      };
      memory.per_session_kb = ((memory.rss_after_kib - rss) * 1024) / IDLE / 1000;
      memory.per_session_beyond_text_kb = ((memory.rss_after_kib - rss) * 1024 - idleTextBytes) / IDLE / 1000;
    }
    if (!withIdle && memory && memory.rss_after_closing_kib === undefined) memory.rss_after_closing_kib = rssKiB();
    const run = await saves(savePages, `round ${i + 1} of ${order.length}, ${withIdle ? `with ${IDLE}` : 'without'} idle sessions`);
    run.idle_sessions = withIdle ? IDLE : 0;
    if (idle) run.idle_sessions_open_after = idle.filter((p) => p.ws.readyState === WebSocket.OPEN).length;
    runs.push(run);
  }
  idle?.forEach((p) => p.close());

  const condition = (withIdle) => {
    const perRound = runs.filter((x) => (x.idle_sessions > 0) === withIdle).map((x) => x.saves_per_s);
    return { median_saves_per_s: median(perRound), saves_per_s: perRound };
  };
  const [without, withIdle] = [condition(false), condition(true)];
  const result = {
    when: new Date().toISOString(),
    node: process.version,
    propagation: prop,
    memory,
    saves: {
      clients: SAVE_CLIENTS,
      round_seconds: SAVE_MS / 1000,
      pairs_of_rounds: ROUNDS,
      idle_sessions: IDLE,
      without,
      with: withIdle,
      ratio_with_without: withIdle.median_saves_per_s / without.median_saves_per_s,
      runs, // in the order run
    },
    unexpected_closes: unexpected,
  };
  if (opt.out) fs.writeFileSync(opt.out, JSON.stringify(result, null, 2) + '\n');
  console.log(table(result));
}

function table({ propagation: p, memory: m, saves: s, unexpected_closes: u }) {
  const ms = (x) => `${r(x.p50)} / ${r(x.p95)} / ${r(x.p99)}`;
  const cores = (c) => `${r(c.server, 2)} / ${r(c.client, 2)} / ${r(c.other, 2)}`;
  const each = (f) => s.runs.map((x) => `${x.idle_sessions ? 'with' : 'w/o'} ${f(x)}`).join(' · ');
  const open = s.runs.filter((x) => x.idle_sessions).map((x) => x.idle_sessions_open_after);
  return [
    '| measure | figure | target |',
    '|---|---|---|',
    `| propagation p50 / p95 / p99, all ${p.editors * (p.editors - 1)} (sender, receiver) pairs | ${ms(p.all_pairs_ms)} ms (max ${r(p.all_pairs_ms.max)}; ${p.deliveries_measured} of ${p.deliveries_expected} deliveries) | ≤ 20 / ≤ 50 ms at p50 / p95 |`,
    `| propagation p50 / p95 / p99, editor 0 → editor 1 | ${ms(p.editor0_to_editor1_ms)} ms (${p.editor0_to_editor1_ms.n} inserts) | |`,
    `| typing | ${p.editors} editors, ${p.typing_seconds} s, ${p.inserts_typed} inserts; converged: ${p.converged ? 'yes' : 'NO'}; saved after the last left: ${p.saved_after_leaving_ms === null ? 'NO' : `${r(p.saved_after_leaving_ms / 1000, 2)} s`} | |`,
    `| cores busy while typing: server · client · other · client event-loop delay p99 | ${cores(p.cpu_cores)} · ${r(p.client_event_loop_delay_ms.p99)} ms | |`,
    `| server RSS before → after ${m.sessions} idle sessions (→ after closing) | ${m.rss_before_kib} → ${m.rss_after_kib} KiB (→ ${m.rss_after_closing_kib}) | |`,
    `| memory per open session beyond the text (${m.text_bytes_each} B each) | ${r(m.per_session_beyond_text_kb)} KB (${r(m.per_session_kb)} KB with it) | ≤ 100 KB |`,
    `| saves/s, ${s.clients} clients, median of ${s.pairs_of_rounds} rounds of ${s.round_seconds} s each: without · with ${s.idle_sessions} idle sessions (with / without) | ${r(s.without.median_saves_per_s)} · ${r(s.with.median_saves_per_s)} (${r(s.ratio_with_without, 3)}) | with ≥ without |`,
    `| saves/s each round, in the order run | ${each((x) => r(x.saves_per_s))} | |`,
    `| save p50 / p99 ms each round | ${each((x) => `${r(x.latency_ms.p50, 2)} / ${r(x.latency_ms.p99, 2)}`)} | |`,
    `| cores busy while saving (server / client / other) each round | ${each((x) => cores(x.cpu_cores))} | |`,
    `| save failures each round · idle sessions still open after each with round · unexpected closes | ${JSON.stringify(s.runs.map((x) => x.failures))} · ${open.join(' · ')} of ${s.idle_sessions} · ${u.length ? JSON.stringify(u.slice(0, 5)) + (u.length > 5 ? ` (+${u.length - 5})` : '') : 'none'} | |`,
  ].join('\n');
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
