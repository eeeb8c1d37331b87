// A button that opens a small menu; closes on outside click and Escape.
import { useLayoutEffect, useRef, useState } from "preact/hooks";
import type { ComponentChildren } from "preact";

export function Menu({
  label,
  buttonClass,
  buttonTitle,
  ariaLabel,
  footer,
  children,
  testId,
}: {
  label: ComponentChildren;
  buttonClass?: string;
  buttonTitle?: string;
  /** The accessible name, when it must differ from the title (it has to contain the visible text). */
  ariaLabel?: string;
  /** Shown under the menu's items, outside the role="menu" list (e.g. a select). */
  footer?: ComponentChildren;
  children: (close: () => void) => ComponentChildren;
  testId?: string;
}) {
  const [open, setOpen] = useState(false);
  const ref = useRef<HTMLDivElement>(null);
  // From the paint that shows the menu on, Escape and outside clicks close it.
  useLayoutEffect(() => {
    if (!open) return;
    const onDown = (e: MouseEvent) => {
      if (!ref.current?.contains(e.target as Node)) setOpen(false);
    };
    const onKey = (e: KeyboardEvent) => {
      if (e.key === "Escape") setOpen(false);
    };
    document.addEventListener("mousedown", onDown);
    document.addEventListener("keydown", onKey);
    return () => {
      document.removeEventListener("mousedown", onDown);
      document.removeEventListener("keydown", onKey);
    };
  }, [open]);
  return (
    <div class="menu" ref={ref}>
      <button
        type="button"
        class={buttonClass}
        title={buttonTitle}
        aria-label={ariaLabel ?? buttonTitle}
        aria-haspopup="menu"
        aria-expanded={open}
        data-testid={testId}
        onClick={() => setOpen(!open)}
      >
        {label}
      </button>
      {open && (
        <div class="menu-popup">
          <div class="menu-list" role="menu">
            {children(() => setOpen(false))}
          </div>
          {footer}
        </div>
      )}
    </div>
  );
}

/** One entry of a menu: a link (href) or a button (onClick); either closes the menu. A
 *  disabled one (a button) stays in its place, so the menu does not shift. */
export function MenuItem({
  close,
  href,
  onClick,
  danger,
  disabled,
  testId,
  children,
}: {
  close: () => void;
  href?: string;
  onClick?: () => void;
  danger?: boolean;
  disabled?: boolean;
  testId?: string;
  children: ComponentChildren;
}) {
  const cls = "menu-item" + (danger ? " danger" : "");
  if (href)
    return (
      <a role="menuitem" class={cls} href={href} onClick={close} data-testid={testId}>
        {children}
      </a>
    );
  return (
    <button
      type="button"
      role="menuitem"
      class={cls}
      data-testid={testId}
      disabled={disabled}
      onClick={() => {
        close();
        onClick?.();
      }}
    >
      {children}
    </button>
  );
}
