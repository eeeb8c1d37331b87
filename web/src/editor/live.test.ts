// The browser's side of a co-editing session (src/editor/live.ts) against a stand-in
// server speaking the same protocol over a fake WebSocket, with fake-indexeddb for the
// device's copy: a change counts as saved only once the server has answered for it, the
// copy survives the session, and a server whose document is not the kept one is never
// merged into it. (The real server and browsers: tests/browser/app/co-editing.spec.ts.)
import "fake-indexeddb/auto";
import * as decoding from "lib0/decoding";
import * as encoding from "lib0/encoding";
import * as syncProtocol from "y-protocols/sync";
import { afterEach, expect, test, vi } from "vitest";
import * as Y from "yjs";
import { LiveSession, type LiveStatus } from "./live";

/** The stand-in server: one document; answers a SyncStep1 only while `answering`. */
class Server {
  doc = new Y.Doc();
  answering = true;
  private waiting: (() => void)[] = [];
  constructor(text: string) {
    this.doc.getText("markdown").insert(0, text);
  }
  release() {
    this.answering = true;
    for (const answer of this.waiting.splice(0)) answer();
  }
  receive(socket: FakeSocket, frame: Uint8Array) {
    const d = decoding.createDecoder(frame);
    while (decoding.hasContent(d)) {
      const kind = decoding.readVarUint(d);
      if (kind !== 0) {
        decoding.readVarUint8Array(d); // awareness
        continue;
      }
      const step = decoding.readVarUint(d);
      const body = decoding.readVarUint8Array(d);
      if (step === syncProtocol.messageYjsSyncStep1) {
        const answer = () => socket.deliver((e) => syncProtocol.writeSyncStep2(e, this.doc, body));
        if (this.answering) answer();
        else this.waiting.push(answer);
      } else Y.applyUpdate(this.doc, body);
    }
  }
}

let server: Server;
const sockets: FakeSocket[] = [];

class FakeSocket {
  static OPEN = 1;
  readyState = 0;
  binaryType = "blob";
  onmessage: ((e: { data: ArrayBuffer }) => void) | null = null;
  onclose: ((e: { code: number }) => void) | null = null;
  constructor(readonly url: string) {
    sockets.push(this);
    // Opens, and the server speaks first: its SyncStep1.
    setTimeout(() => {
      this.readyState = 1;
      this.deliver((e) => syncProtocol.writeSyncStep1(e, server.doc));
    }, 0);
  }
  deliver(write: (e: encoding.Encoder) => void) {
    const e = encoding.createEncoder();
    encoding.writeVarUint(e, 0);
    write(e);
    const bytes = encoding.toUint8Array(e);
    setTimeout(() => this.onmessage?.({ data: bytes.slice().buffer }), 0);
  }
  send(data: Uint8Array) {
    server.receive(this, data);
  }
  close() {
    this.readyState = 3;
    setTimeout(() => this.onclose?.({ code: 1000 }), 0);
  }
}
vi.stubGlobal("WebSocket", FakeSocket);

const open: LiveSession[] = [];
afterEach(() => {
  for (const s of open.splice(0)) s.destroy();
  sockets.length = 0;
});

function join(key: string, statuses: LiveStatus[] = [], diverged: (kept: string | null) => void = () => undefined) {
  const session = new LiveSession({
    slug: "runbook",
    workspace: "team",
    key,
    user: { id: 1, name: "Ann" },
    onStatus: (s) => statuses.push(s),
    onPeers: () => undefined,
    onClosed: () => undefined,
    onDiverged: diverged,
  });
  open.push(session);
  return session;
}

const last = (statuses: LiveStatus[]) => statuses[statuses.length - 1];

test("a change counts as saved only once the server has answered for it", async () => {
  server = new Server("# Runbook\n");
  const statuses: LiveStatus[] = [];
  const session = join("k-ack", statuses);
  expect(await session.ready).toBe(true);
  expect(session.text.toString()).toBe("# Runbook\n");
  expect(last(statuses)).toMatchObject({ online: true, pending: 0 });

  server.answering = false;
  session.text.insert(10, "Restart it.\n");
  expect(last(statuses)).toMatchObject({ online: true, pending: 1 });
  // Sent at once (the server has it), acknowledged only when the server answers.
  await vi.waitFor(() => expect(server.doc.getText("markdown").toString()).toBe("# Runbook\nRestart it.\n"));
  await new Promise((r) => setTimeout(r, 300));
  expect(last(statuses)!.pending).toBe(1);
  server.release();
  await vi.waitFor(() => expect(last(statuses)).toMatchObject({ online: true, pending: 0 }));
});

test("the device's copy outlives the session, and merges into the server's document once", async () => {
  server = new Server("# Plan\n");
  const first = join("k-copy");
  await first.ready;
  first.text.insert(7, "Step one.\n");
  await vi.waitFor(() => expect(first.pending).toBe(0));
  first.destroy();
  open.length = 0;
  // Someone else edits meanwhile; this device comes back with its copy.
  server.doc.getText("markdown").insert(0, "> shared\n");
  const again = join("k-copy");
  expect(await again.ready).toBe(true);
  await vi.waitFor(() => expect(again.text.toString()).toBe("> shared\n# Plan\nStep one.\n"));
  expect(server.doc.getText("markdown").toString()).toBe("> shared\n# Plan\nStep one.\n");
});

test("a server whose document is not the one kept here is not merged into it", async () => {
  server = new Server("# Old\n");
  const first = join("k-diverged");
  await first.ready;
  await vi.waitFor(() => expect(first.pending).toBe(0));
  first.destroy();
  open.length = 0;
  // The server's document was replaced (a restore from a backup, say).
  server = new Server("# New\n");
  const diverged = vi.fn();
  const again = join("k-diverged", [], diverged);
  await vi.waitFor(() => expect(diverged).toHaveBeenCalledWith(null));
  // Nothing of the kept copy went to the server: its text is not doubled.
  expect(server.doc.getText("markdown").toString()).toBe("# New\n");
  void again;
});
