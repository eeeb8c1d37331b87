// Who else is on a page: in its editor (the co-editing session's people) or, for the
// page view, editing it now; each once, with the colour of their cursor, and "typing…"
// while they type.
import { t } from "../i18n";

export interface Present {
  id: number;
  name: string;
  typing: boolean;
}

/** A colour per person, the same on every screen and for every reader (from their id). */
export function colorOf(id: number): string {
  const hue = (id * 137.508) % 360;
  return `hsl(${hue.toFixed(0)}, 70%, 45%)`;
}

export function Presence({ people, label }: { people: Present[]; label: string }) {
  const once = new Map<number, Present>();
  for (const p of people) {
    const seen = once.get(p.id);
    if (!seen || (p.typing && !seen.typing)) once.set(p.id, p);
  }
  if (once.size === 0) return null;
  return (
    <ul class="presence" aria-label={label} data-testid="presence">
      {[...once.values()].map((p) => (
        <li key={p.id} style={{ "--peer": colorOf(p.id) }} data-testid="presence-person">
          <span class="presence-dot" aria-hidden="true" />
          {p.name}
          {p.typing && <span class="muted"> {t("live.typing")}</span>}
        </li>
      ))}
    </ul>
  );
}
