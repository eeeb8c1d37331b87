// Following a page while it is read (`/api/pages/{slug}/watch`): who is editing it and
// who of them is typing, and each new revision, so the page view shows others' saved
// changes without a reload. A small WebSocket of JSON events, in the main bundle (the
// co-editing session itself is the editor's, in its lazy chunk).
import { useEffect, useRef, useState } from "preact/hooks";

/** Someone in the page's co-editing session, as the server knows them. */
export interface Person {
  id: number;
  name: string;
  typing: boolean;
}

type Event = { type: "presence"; people: Person[] } | { type: "saved"; revision: string; slug: string } | { type: "deleted" };

/** Close codes after which following stops: the page left (4404), access did (1008). */
const FINAL = new Set([4404, 1008]);

/** Who is editing the page `slug` of workspace `ws`; `onSaved` is called with each new
 *  revision and the page's address then. Reconnects (1 s, doubling to 30 s) after a drop. */
export function useWatch(slug: string, ws: string, onSaved: (revision: string, slug: string) => void): Person[] {
  const [people, setPeople] = useState<Person[]>([]);
  const saved = useRef(onSaved);
  saved.current = onSaved;
  useEffect(() => {
    let socket: WebSocket | null = null;
    let stopped = false;
    let retry = 0;
    let timer = 0;
    const connect = () => {
      const url = new URL(`/api/pages/${encodeURIComponent(slug)}/watch`, window.location.href);
      url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
      url.searchParams.set("ws", ws);
      const s = new WebSocket(url);
      socket = s;
      s.onmessage = (e) => {
        retry = 0;
        let event: Event;
        try {
          event = JSON.parse(String(e.data)) as Event;
        } catch {
          return;
        }
        if (event.type === "presence") setPeople(event.people);
        else if (event.type === "saved") saved.current(event.revision, event.slug);
      };
      s.onclose = (e) => {
        setPeople([]);
        if (stopped || FINAL.has(e.code)) return;
        timer = window.setTimeout(connect, Math.min(30_000, 1000 * 2 ** retry));
        retry += 1;
      };
    };
    connect();
    return () => {
      stopped = true;
      window.clearTimeout(timer);
      socket?.close();
    };
  }, [slug, ws]);
  return people;
}
