// The keys of a combobox over a listbox — the command palette, the search box, the move
// dialog's parent picker — in one place: the arrows move the highlighted option (round
// from the last to the first), Home and End go to the first and the last, and the
// highlighted option is scrolled into view. Enter, Escape and what choosing does stay
// with each list.
import { useEffect, useState } from "preact/hooks";

export interface Listbox {
  /** The highlighted option, -1 for none. */
  current: number;
  setActive: (i: number) => void;
  /** Handles a key that moves the highlight (and stops the browser's own use of it);
   *  answers whether it was one. With no options, no key is. */
  move: (e: KeyboardEvent) => boolean;
}

/** A listbox of `count` options whose elements have the ids `${idPrefix}${i}`; `initial`
 *  is the option highlighted at first (-1: none until a key or the pointer picks one). */
export function useListbox(count: number, idPrefix: string, initial = 0): Listbox {
  const [active, setActive] = useState(initial);
  const current = active < 0 || count === 0 ? -1 : Math.min(active, count - 1);

  useEffect(() => {
    if (current >= 0) document.getElementById(`${idPrefix}${current}`)?.scrollIntoView({ block: "nearest" });
  }, [current, idPrefix]);

  function move(e: KeyboardEvent): boolean {
    // An empty list leaves every key to the text field (Home and End move its caret).
    const target = count ? highlighted(e.key, current, count) : undefined;
    if (target === undefined) return false;
    e.preventDefault();
    setActive(target);
    return true;
  }
  return { current, setActive, move };
}

/** Where `key` takes the highlight from `current` among `count` options; undefined for a
 *  key that does not move it. */
export function highlighted(key: string, current: number, count: number): number | undefined {
  const last = Math.max(count - 1, 0);
  switch (key) {
    case "ArrowDown":
      return current < 0 ? 0 : (current + 1) % Math.max(count, 1);
    case "ArrowUp":
      return current <= 0 ? last : current - 1;
    case "Home":
      return 0;
    case "End":
      return last;
    default:
      return undefined;
  }
}
