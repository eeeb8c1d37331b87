// A page's co-editing session in the browser: one Yjs document whose root text
// ("markdown") is the page's raw markdown, shared over the page's WebSocket
// (`/api/pages/{slug}/live`) with the Yjs sync and awareness protocols (y-protocols), and
// kept in the browser's IndexedDB (y-indexeddb) so that what is typed while the
// connection is down survives a reload and merges when it comes back.
//
// The server stores every update before it reads the connection's next message, and
// answers a SyncStep1 only after that: so each SyncStep1 this side sends after its
// updates is a request for acknowledgement, and the SyncStep2 that answers it says that
// everything sent before is durable. Only then is a change counted as saved.
import { isolateHistory } from "@codemirror/commands";
import { EditorState, Prec, type Extension, type Transaction } from "@codemirror/state";
import { EditorView, keymap } from "@codemirror/view";
import * as decoding from "lib0/decoding";
import * as encoding from "lib0/encoding";
import { IndexeddbPersistence } from "y-indexeddb";
import * as awarenessProtocol from "y-protocols/awareness";
import * as syncProtocol from "y-protocols/sync";
import { yCollab, yUndoManagerKeymap } from "y-codemirror.next";
import * as Y from "yjs";
import { colorOf, type Present } from "../components/Presence";

/** The name of the shared text (the server's `core::live::TEXT`). */
const TEXT = "markdown";
const MESSAGE_SYNC = 0;
const MESSAGE_AWARENESS = 1;
/** Close code the server sends when the page left (trashed or purged) during the session. */
const PAGE_GONE = 4404;
/** Close code for a caller no longer a member of the workspace. */
const POLICY = 1008;
/** Local changes are acknowledged in batches: a SyncStep1 this long after typing pauses. */
const ACK_AFTER_MS = 150;
/** Someone is "typing" until they pause this long. */
const TYPING_MS = 2500;

export interface LiveStatus {
  /** The WebSocket is open and the first exchange done. */
  online: boolean;
  /** Local changes the server has not acknowledged. */
  pending: number;
  /** Of those, how many this device has stored (IndexedDB): safe across a reload. */
  kept: number;
}

interface LiveOptions {
  /** The page's address and workspace (its WebSocket is at the address). */
  slug: string;
  workspace: string;
  /** Where this device keeps the document (one IndexedDB database per page). */
  key: string;
  user: { id: number; name: string };
  onStatus: (status: LiveStatus) => void;
  /** The others in the session, as their editors say (one entry per tab). */
  onPeers: (peers: Present[]) => void;
  /** The session was closed for good: the page left, or the caller's access did. */
  onClosed: (why: "gone" | "policy") => void;
  /** The server's document is not the one kept here (its state was lost or replaced):
   *  the text of this device's copy, when it held changes the server never acknowledged. */
  onDiverged: (kept: string | null) => void;
}


/** Whether state vector `a` has everything `b` has. */
function covers(a: Map<number, number>, b: Map<number, number>): boolean {
  for (const [client, clock] of b) if ((a.get(client) ?? 0) < clock) return false;
  return true;
}

export class LiveSession {
  readonly doc = new Y.Doc();
  readonly text: Y.Text = this.doc.getText(TEXT);
  readonly awareness = new awarenessProtocol.Awareness(this.doc);
  /** Resolves true when the document holds text to edit: the server's (first exchange
   *  done) or this device's copy (kept from before, while the server cannot be reached);
   *  false when the first connection failed and this device keeps no copy. */
  readonly ready: Promise<boolean>;
  private store: IndexeddbPersistence;
  private socket: WebSocket | null = null;
  private online = false;
  private closed = false;
  private retry = 0;
  private retryTimer = 0;
  private ackTimer = 0;
  private typingTimer = 0;
  /** Local changes made, how many of them are stored on this device, and how many the
   *  server acknowledged. */
  private made = 0;
  private stored = 0;
  private acked = 0;
  /** For each SyncStep1 sent and not yet answered: how many changes it acknowledges. */
  private asked: number[] = [];
  /** The server's state vector when this device last had everything acknowledged. */
  private serverState: Map<number, number> | null = null;
  private ownState = false;
  private markReady!: (ok: boolean) => void;
  private everOpen = false;
  private opts: LiveOptions;
  private slug: string;

  constructor(opts: LiveOptions) {
    this.opts = opts;
    this.slug = opts.slug;
    this.ready = new Promise((resolve) => (this.markReady = resolve));
    this.store = new IndexeddbPersistence(opts.key, this.doc);
    this.awareness.setLocalState({ user: { id: opts.user.id, name: opts.user.name, color: colorOf(opts.user.id), colorLight: colorOf(opts.user.id).replace("45%)", "85%)") }, typing: false });
    this.doc.on("update", (update: Uint8Array, origin: unknown) => {
      if (origin === this || origin === this.store) return;
      this.made += 1;
      this.saveCounts();
      this.typing();
      if (this.online) {
        this.send((e) => syncProtocol.writeUpdate(e, update), MESSAGE_SYNC);
        this.askAck();
      }
      this.status();
    });
    this.awareness.on("update", ({ added, updated, removed }: Record<string, number[]>, origin: unknown) => {
      if (origin === "local" && this.online) {
        const changed = [...added, ...updated, ...removed];
        this.send((e) => encoding.writeVarUint8Array(e, awarenessProtocol.encodeAwarenessUpdate(this.awareness, changed)), MESSAGE_AWARENESS);
      }
      this.peers();
    });
    window.addEventListener("beforeunload", this.leave);
    void this.start();
  }

  private async start() {
    await this.store.whenSynced;
    const [made, acked, server] = await Promise.all([this.store.get("made"), this.store.get("acked"), this.store.get("server")]);
    this.made = typeof made === "number" ? made : 0;
    this.stored = this.made;
    this.acked = typeof acked === "number" ? acked : 0;
    if (server instanceof Uint8Array || server instanceof ArrayBuffer) {
      this.serverState = Y.decodeStateVector(new Uint8Array(server));
    }
    // A copy kept from before can be edited at once (offline too); else wait for the server.
    this.ownState = this.text.length > 0 || this.serverState !== null;
    if (this.ownState) this.markReady(true);
    this.status();
    if (!this.closed) this.connect();
  }

  /** Changes this device holds that the server has not acknowledged. */
  get pending(): number {
    return Math.max(0, this.made - this.acked);
  }

  private status() {
    this.opts.onStatus({ online: this.online, pending: this.pending, kept: Math.max(0, this.stored - this.acked) });
  }

  private peers() {
    const peers: Present[] = [];
    for (const [client, state] of this.awareness.getStates()) {
      if (client === this.doc.clientID) continue;
      const user = (state as { user?: { id?: unknown; name?: unknown } }).user;
      if (!user || typeof user.name !== "string") continue;
      peers.push({
        id: typeof user.id === "number" ? user.id : 0,
        name: user.name,
        typing: (state as { typing?: unknown }).typing === true,
      });
    }
    this.opts.onPeers(peers);
  }

  private typing() {
    if (this.awareness.getLocalState()?.typing !== true) this.awareness.setLocalStateField("typing", true);
    window.clearTimeout(this.typingTimer);
    this.typingTimer = window.setTimeout(() => this.awareness.setLocalStateField("typing", false), TYPING_MS);
  }

  /** Stores the counts beside the document; a change counts as kept once its count is
   *  stored (after the change itself: y-indexeddb stores each update as it is made). */
  private saveCounts() {
    const made = this.made;
    void this.store.set("acked", this.acked);
    void this.store.set("made", made).then(() => {
      if (made <= this.stored) return;
      this.stored = made;
      this.status();
    });
  }

  private connect() {
    const socket = new WebSocket(liveUrl(this.slug, this.opts.workspace));
    socket.binaryType = "arraybuffer";
    this.socket = socket;
    socket.onmessage = (e) => this.receive(new Uint8Array(e.data as ArrayBuffer));
    socket.onclose = (e) => {
      if (this.socket !== socket) return;
      this.socket = null;
      this.online = false;
      this.asked = [];
      // Others' presence is unknown while away.
      const others = [...this.awareness.getStates().keys()].filter((c) => c !== this.doc.clientID);
      awarenessProtocol.removeAwarenessStates(this.awareness, others, this);
      this.status();
      if (this.closed) return;
      if (!this.everOpen && !this.ownState) this.markReady(false);
      if (e.code === PAGE_GONE || e.code === POLICY) {
        this.opts.onClosed(e.code === PAGE_GONE ? "gone" : "policy");
        return;
      }
      // Back off (0.5 s doubling to 10 s): a server restarting, a network coming back.
      this.retryTimer = window.setTimeout(() => this.connect(), Math.min(10_000, 500 * 2 ** this.retry));
      this.retry += 1;
    };
  }

  /** The page was renamed: connect at its new address from now on (the session, the
   *  page's by its id, is the same). */
  follow(slug: string) {
    this.slug = slug;
  }

  /** Connects again at once (after the page came back from the trash, say). */
  reconnect() {
    if (this.closed || this.socket) return;
    window.clearTimeout(this.retryTimer);
    this.retry = 0;
    this.connect();
  }

  private send(write: (e: encoding.Encoder) => void, kind: number) {
    const socket = this.socket;
    if (!socket || socket.readyState !== WebSocket.OPEN) return;
    const e = encoding.createEncoder();
    encoding.writeVarUint(e, kind);
    write(e);
    socket.send(encoding.toUint8Array(e));
  }

  /** Asks the server to acknowledge every change sent so far (a SyncStep1 after them). */
  private askAck() {
    window.clearTimeout(this.ackTimer);
    this.ackTimer = window.setTimeout(() => {
      if (!this.online) return;
      this.asked.push(this.made);
      this.send((e) => syncProtocol.writeSyncStep1(e, this.doc), MESSAGE_SYNC);
    }, ACK_AFTER_MS);
  }

  private receive(frame: Uint8Array) {
    const d = decoding.createDecoder(frame);
    while (decoding.hasContent(d)) {
      const kind = decoding.readVarUint(d);
      if (kind === MESSAGE_AWARENESS) {
        awarenessProtocol.applyAwarenessUpdate(this.awareness, decoding.readVarUint8Array(d), this);
        continue;
      }
      if (kind !== MESSAGE_SYNC) return;
      const step = decoding.readVarUint(d);
      const body = decoding.readVarUint8Array(d);
      if (step === syncProtocol.messageYjsSyncStep1) this.begin(body);
      else if (step === syncProtocol.messageYjsSyncStep2) {
        Y.applyUpdate(this.doc, body, this);
        this.answered();
      } else if (step === syncProtocol.messageYjsUpdate) Y.applyUpdate(this.doc, body, this);
    }
  }

  /** The server's opening SyncStep1: send what it lacks, and ask for what this side lacks
   *  (whose answer also acknowledges what was just sent). */
  private begin(serverVector: Uint8Array) {
    const server = Y.decodeStateVector(serverVector);
    if (this.serverState && !covers(server, this.serverState)) {
      // Not the document this device kept (the server's was lost or replaced): merging
      // them would double the text. Start again from the server's.
      this.diverge();
      return;
    }
    this.online = true;
    this.everOpen = true;
    this.retry = 0;
    this.send((e) => syncProtocol.writeSyncStep2(e, this.doc, serverVector), MESSAGE_SYNC);
    this.asked.push(this.made);
    this.send((e) => syncProtocol.writeSyncStep1(e, this.doc), MESSAGE_SYNC);
    this.send((e) => encoding.writeVarUint8Array(e, awarenessProtocol.encodeAwarenessUpdate(this.awareness, [this.doc.clientID])), MESSAGE_AWARENESS);
    this.status();
  }

  private answered() {
    const upTo = this.asked.shift();
    if (upTo === undefined) return;
    this.acked = Math.max(this.acked, upTo);
    if (this.pending === 0) {
      // Everything here is the server's too: remember its state to recognise it later.
      const vector = Y.encodeStateVector(this.doc);
      void this.store.set("server", vector.slice().buffer);
      this.serverState = Y.decodeStateVector(vector);
    }
    this.saveCounts();
    this.markReady(true);
    this.status();
  }

  private diverge() {
    const kept = this.pending > 0 ? this.text.toString() : null;
    this.closed = true;
    this.socket?.close();
    void this.store.clearData().then(() => this.opts.onDiverged(kept));
  }

  private leave = () => {
    awarenessProtocol.removeAwarenessStates(this.awareness, [this.doc.clientID], "local");
  };

  /** Leaves the session (the editor closed); what is kept on this device stays. */
  destroy() {
    this.closed = true;
    window.clearTimeout(this.retryTimer);
    window.clearTimeout(this.ackTimer);
    window.clearTimeout(this.typingTimer);
    window.removeEventListener("beforeunload", this.leave);
    this.leave();
    this.socket?.close();
    this.socket = null;
    this.awareness.destroy();
    void this.store.destroy();
    this.doc.destroy();
  }
}

/** The WebSocket address of a page's session. */
function liveUrl(slug: string, workspace: string): string {
  const u = new URL(`/api/pages/${encodeURIComponent(slug)}/live`, window.location.href);
  u.protocol = u.protocol === "https:" ? "wss:" : "ws:";
  u.searchParams.set("ws", workspace);
  return u.toString();
}

/** CodeMirror bound to the session's text: others' edits and cursors (with their names)
 *  show as they happen; undo takes back this person's own edits only. The editor must be
 *  created with the session's text. */
export function collab(session: LiveSession): Extension {
  const undoManager = new Y.UndoManager(session.text);
  // A change marked as a step of its own (the toolbar's and Ctrl+B's, `isolateHistory`)
  // stays one for the shared undo too: it starts a new step before it and after it
  // (otherwise edits within 500 ms of each other are one step).
  const isolated = (tr: Transaction) => tr.annotation(isolateHistory) !== undefined;
  return [
    yCollab(session.text, session.awareness, { undoManager }),
    Prec.high(keymap.of(yUndoManagerKeymap)),
    EditorState.transactionFilter.of((tr) => {
      if (isolated(tr)) undoManager.stopCapturing();
      return tr;
    }),
    EditorView.updateListener.of((u) => {
      if (u.transactions.some(isolated)) undoManager.stopCapturing();
    }),
  ];
}
