// The link graph at /app/-/graph (GET /api/graph), loaded as its own chunk. d3-force
// computes the layout (a fixed number of ticks, so the picture is still when it shows);
// the graph is drawn as SVG, each page a link. Zoom with the wheel or the buttons, pan by
// dragging the background, filter by tag. Links to missing pages (broken) end at a dashed
// "missing" node and are drawn dashed. A crowded graph (more than LABEL_LIMIT nodes)
// names only the page pointed at or focused, the page it was opened for (`?page=`) and
// their neighbours, until it is zoomed in far enough for every name to fit.
import { forceCenter, forceCollide, forceLink, forceManyBody, forceSimulation, type SimulationNodeDatum } from "d3-force";
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { api, type GraphData } from "../api";
import { FormError } from "../components/Form";
import { failure, type ErrorText } from "../errors";
import { t, useI18n } from "../i18n";
import { naturalCompare } from "../order";
import { location, pageHref } from "../router";
import { currentWorkspace, pagesVersion } from "../session";
import { useStore } from "../store";

interface Node extends SimulationNodeDatum {
  id: string;
  title: string;
  degree: number;
  missing: boolean;
}
interface Edge {
  source: Node;
  target: Node;
  broken: boolean;
}
interface View {
  x: number;
  y: number;
  k: number;
}

const WIDTH = 900;
const HEIGHT = 600;
const MIN_K = 0.2;
const MAX_K = 5;
/** Above this many nodes the names overlap: only those of the neighbourhood in view show. */
const LABEL_LIMIT = 40;
/** From this zoom on every name shows (11 px text then reads at 15 px and up). */
const LABEL_ZOOM = 1.4;

function radius(n: Node): number {
  return n.missing ? 5 : 5 + Math.sqrt(n.degree) * 2.5;
}

/** The nodes and edges to draw (with the tag filter), laid out by d3-force. */
function layout(data: GraphData, tag: string): { nodes: Node[]; edges: Edge[] } {
  const keep = data.nodes.filter((n) => !tag || n.tags.includes(tag));
  const byId = new Map<string, Node>(keep.map((n) => [n.id, { id: n.id, title: n.title, degree: n.degree, missing: false }]));
  const edges: { source: string; target: string; broken: boolean }[] = [];
  for (const e of data.edges) if (byId.has(e.source) && byId.has(e.target)) edges.push({ ...e, broken: false });
  for (const b of data.broken) {
    if (!byId.has(b.source)) continue;
    const id = "missing:" + b.target;
    if (!byId.has(id)) byId.set(id, { id, title: b.target, degree: 0, missing: true });
    edges.push({ source: b.source, target: id, broken: true });
  }
  const nodes = [...byId.values()];
  const links = edges.map((e) => ({ source: byId.get(e.source)!, target: byId.get(e.target)!, broken: e.broken }));
  const sim = forceSimulation(nodes)
    .force("link", forceLink<Node, Edge>(links).distance(70))
    .force("charge", forceManyBody().strength(-160))
    .force("center", forceCenter(WIDTH / 2, HEIGHT / 2))
    .force("collide", forceCollide<Node>((n) => radius(n) + 6))
    .stop();
  const ticks = Math.ceil(Math.log(sim.alphaMin()) / Math.log(1 - sim.alphaDecay()));
  sim.tick(ticks);
  return { nodes, edges: links };
}

/** Fits the drawing into the view box. */
function fit(nodes: Node[]): View {
  if (nodes.length === 0) return { x: 0, y: 0, k: 1 };
  const xs = nodes.map((n) => n.x ?? 0);
  const ys = nodes.map((n) => n.y ?? 0);
  const [x0, x1, y0, y1] = [Math.min(...xs) - 60, Math.max(...xs) + 60, Math.min(...ys) - 40, Math.max(...ys) + 40];
  const k = Math.max(MIN_K, Math.min(2, WIDTH / (x1 - x0), HEIGHT / (y1 - y0)));
  return { k, x: WIDTH / 2 - ((x0 + x1) / 2) * k, y: HEIGHT / 2 - ((y0 + y1) / 2) * k };
}

/** Each node's neighbours (either direction of a link). */
function neighbours(edges: Edge[]): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  const add = (a: string, b: string) => (out.get(a) ?? out.set(a, new Set()).get(a)!).add(b);
  for (const e of edges) {
    add(e.source.id, e.target.id);
    add(e.target.id, e.source.id);
  }
  return out;
}

function zoomAt(v: View, factor: number, cx: number, cy: number): View {
  const k = Math.min(MAX_K, Math.max(MIN_K, v.k * factor));
  const f = k / v.k;
  return { k, x: cx - (cx - v.x) * f, y: cy - (cy - v.y) * f };
}

export default function Graph() {
  useI18n();
  const ws = useStore(currentWorkspace);
  const version = useStore(pagesVersion);
  const [data, setData] = useState<GraphData | null>(null);
  const [error, setError] = useState<ErrorText>("");
  const [tag, setTag] = useState("");
  const [view, setView] = useState<View>({ x: 0, y: 0, k: 1 });
  const svg = useRef<SVGSVGElement>(null);
  const drag = useRef<{ px: number; py: number; x: number; y: number; moved: boolean } | null>(null);
  const dragged = useRef(false);
  /** The node pointed at, and the node focused (keyboard): each shows its neighbourhood. */
  const [hovered, setHovered] = useState<string | null>(null);
  const [focused, setFocused] = useState<string | null>(null);
  const selected = useStore(location).query.get("page");

  useEffect(() => {
    document.title = t("nav.graph");
    api.graph().then(setData, (e) => setError(failure(e)));
  }, [ws, version]);

  const drawn = useMemo(() => (data ? layout(data, tag) : null), [data, tag]);
  useEffect(() => {
    if (drawn) setView(fit(drawn.nodes));
  }, [drawn]);
  const near = useMemo(() => (drawn ? neighbours(drawn.edges) : new Map<string, Set<string>>()), [drawn]);
  const crowded = (drawn?.nodes.length ?? 0) > LABEL_LIMIT;
  /** The page whose neighbourhood is named: pointed at, else focused, else the one the
   *  graph was opened for. */
  const centre = hovered ?? focused ?? selected ?? null;
  const named = (id: string) =>
    !crowded || view.k >= LABEL_ZOOM || id === centre || (centre !== null && near.get(centre)?.has(id) === true);
  const tags = useMemo(() => [...new Set(data?.nodes.flatMap((n) => n.tags) ?? [])].sort(naturalCompare), [data]);

  /** A client point in view-box units. */
  function point(clientX: number, clientY: number): [number, number] {
    const r = svg.current!.getBoundingClientRect();
    return [((clientX - r.left) / r.width) * WIDTH, ((clientY - r.top) / r.height) * HEIGHT];
  }

  // The wheel zooms around the pointer (a non-passive listener, to keep the page still).
  useEffect(() => {
    const el = svg.current;
    if (!el) return;
    const onWheel = (e: WheelEvent) => {
      e.preventDefault();
      const [cx, cy] = point(e.clientX, e.clientY);
      setView((v) => zoomAt(v, Math.exp(-e.deltaY * 0.0015), cx, cy));
    };
    el.addEventListener("wheel", onWheel, { passive: false });
    return () => el.removeEventListener("wheel", onWheel);
  }, [drawn !== null]);

  function onPointerDown(e: PointerEvent) {
    if (e.button !== 0) return;
    drag.current = { px: e.clientX, py: e.clientY, x: view.x, y: view.y, moved: false };
    dragged.current = false;
  }
  function onPointerMove(e: PointerEvent) {
    const d = drag.current;
    if (!d) return;
    const r = svg.current!.getBoundingClientRect();
    const dx = ((e.clientX - d.px) / r.width) * WIDTH;
    const dy = ((e.clientY - d.py) / r.height) * HEIGHT;
    if (!d.moved && Math.hypot(dx, dy) < 3) return;
    if (!d.moved) svg.current!.setPointerCapture(e.pointerId);
    d.moved = true;
    dragged.current = true;
    setView((v) => ({ ...v, x: d.x + dx, y: d.y + dy }));
  }
  function onPointerUp() {
    drag.current = null;
  }

  const zoomBy = (factor: number) => setView((v) => zoomAt(v, factor, WIDTH / 2, HEIGHT / 2));

  return (
    <div class="graph-screen">
      <div class="editor-bar">
        <h1>{t("nav.graph")}</h1>
        {data && <span class="badge">{t("intel.mode", { mode: data.mode })}</span>}
        <label class="language-select">
          <span>{t("graph.filter_tag")}</span>
          <select value={tag} onChange={(e) => setTag(e.currentTarget.value)} name="graph-tag">
            <option value="">{t("graph.all_tags")}</option>
            {tags.map((x) => (
              <option key={x} value={x}>
                #{x}
              </option>
            ))}
          </select>
        </label>
        <div class="graph-zoom" role="group" aria-label={t("graph.zoom")}>
          <button type="button" onClick={() => zoomBy(1.3)} aria-label={t("graph.zoom_in")} title={t("graph.zoom_in")}>
            +
          </button>
          <button type="button" onClick={() => zoomBy(1 / 1.3)} aria-label={t("graph.zoom_out")} title={t("graph.zoom_out")}>
            −
          </button>
          <button type="button" onClick={() => drawn && setView(fit(drawn.nodes))}>
            {t("graph.fit")}
          </button>
        </div>
      </div>
      <FormError error={error} />
      {drawn && drawn.nodes.length === 0 && <p class="muted">{t("graph.empty")}</p>}
      {drawn && (
        <svg
          ref={svg}
          class="graph"
          viewBox={`0 0 ${WIDTH} ${HEIGHT}`}
          role="group"
          aria-label={t("graph.label", {
            pages: t("count.pages", { count: drawn.nodes.filter((n) => !n.missing).length }),
            links: t("count.links", { count: drawn.edges.length }),
          })}
          data-testid="graph"
          onPointerDown={onPointerDown}
          onPointerMove={onPointerMove}
          onPointerUp={onPointerUp}
          onPointerCancel={onPointerUp}
          onClickCapture={(e) => {
            // The end of a pan is not a click on a node.
            if (dragged.current) {
              e.preventDefault();
              e.stopPropagation();
              dragged.current = false;
            }
          }}
        >
          <g data-testid="graph-viewport" transform={`translate(${view.x.toFixed(1)},${view.y.toFixed(1)}) scale(${view.k.toFixed(3)})`}>
            {drawn.edges.map((e, i) => (
              <line
                key={i}
                class={(e.broken ? "edge edge-broken" : "edge") + (centre && (e.source.id === centre || e.target.id === centre) ? " edge-near" : "")}
                x1={e.source.x}
                y1={e.source.y}
                x2={e.target.x}
                y2={e.target.y}
              />
            ))}
            {drawn.nodes.map((n) => (
              <a
                key={n.id}
                href={n.missing ? pageHref(n.title) : pageHref(n.id)}
                class={(n.missing ? "node node-missing" : "node") + (n.id === centre ? " node-centre" : "")}
                aria-label={n.missing ? t("page.wikilink_missing", { title: n.title }) : n.title}
                onPointerEnter={() => setHovered(n.id)}
                onPointerLeave={() => setHovered((h) => (h === n.id ? null : h))}
                onFocus={() => setFocused(n.id)}
                onBlur={() => setFocused((f) => (f === n.id ? null : f))}
              >
                <circle cx={n.x} cy={n.y} r={radius(n)} />
                {named(n.id) && (
                  <text x={(n.x ?? 0) + radius(n) + 3} y={(n.y ?? 0) + 4}>
                    {n.title}
                  </text>
                )}
              </a>
            ))}
          </g>
        </svg>
      )}
      {!data && !error && <p class="muted">{t("common.loading")}</p>}
      <p class="hint">
        {t("graph.hint")} {crowded && t("graph.labels_hint")}
      </p>
    </div>
  );
}
