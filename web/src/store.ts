// A minimal observable value and the hook that re-renders a component when it changes.
// (Enough for a handful of app-wide values; no dependency needed.)
import { useLayoutEffect, useRef, useState } from "preact/hooks";

export interface Store<T> {
  get(): T;
  set(value: T): void;
  update(fn: (value: T) => T): void;
  subscribe(fn: (value: T) => void): () => void;
}

export function store<T>(initial: T): Store<T> {
  let value = initial;
  const subs = new Set<(value: T) => void>();
  return {
    get: () => value,
    set(next) {
      if (Object.is(next, value)) return;
      value = next;
      for (const fn of [...subs]) fn(value);
    },
    update(fn) {
      this.set(fn(value));
    },
    subscribe(fn) {
      subs.add(fn);
      return () => subs.delete(fn);
    },
  };
}

export function useStore<T>(s: Store<T>): T {
  const [, force] = useState(0);
  const value = s.get();
  const rendered = useRef(value);
  rendered.current = value;
  // Subscribed in a layout effect (in the same task as the render), and checked once
  // subscribed: a plain effect waits for the next frame, and a change made in between —
  // a Ctrl+K pressed as the shell appeared — was lost (the palette stayed shut; seen in
  // CI about one run in fifteen).
  useLayoutEffect(() => {
    const unsubscribe = s.subscribe(() => force((n) => n + 1));
    if (!Object.is(s.get(), rendered.current)) force((n) => n + 1);
    return unsubscribe;
  }, [s]);
  return value;
}
