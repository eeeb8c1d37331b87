// The formatting toolbar above the markdown source, for people who do not know markdown:
// heading, bold, italic, link, bulleted list, checklist, code, table and image upload.
// It is a WAI-ARIA toolbar: one Tab stop, arrow keys (and Home/End) move between the
// buttons. A click does not take the focus from the source (so its selection stays
// visible); every button returns the focus to the source, one undo step per use.
// Part of the editor's lazy chunk (loaded with CodeMirror).
import type { EditorView } from "@codemirror/view";
import { useRef, useState } from "preact/hooks";
import { t } from "../i18n";
import { uploadTypes } from "../limits";
import { format, type FormatAction } from "./format";

const mac = /Mac|iPhone|iPad/.test(navigator.platform || navigator.userAgent);

// 16×16 line icons (drawn with currentColor, so both themes and forced colours work).
const ICONS: Record<FormatAction | "image", string> = {
  heading: "M3.5 2.5v11M12.5 2.5v11M3.5 8h9",
  bold: "M4.5 2.5h4.25a2.75 2.75 0 0 1 0 5.5H4.5zM4.5 8h5a2.75 2.75 0 0 1 0 5.5h-5z",
  italic: "M7 2.5h6M3 13.5h6M10 2.5 6 13.5",
  link: "M6.8 9.2a2.6 2.6 0 0 0 3.7 0l2.3-2.3a2.6 2.6 0 0 0-3.7-3.7l-.9.9M9.2 6.8a2.6 2.6 0 0 0-3.7 0L3.2 9.1a2.6 2.6 0 0 0 3.7 3.7l.9-.9",
  bullets: "M6.5 4h7M6.5 8h7M6.5 12h7M2.5 3.5h1v1h-1zM2.5 7.5h1v1h-1zM2.5 11.5h1v1h-1z",
  checklist: "M2 4l1.5 1.5L6 2.5M2.5 9.5h3v3h-3zM8.5 4h5M8.5 11h5",
  code: "M5.5 4 1.5 8l4 4M10.5 4l4 4-4 4",
  table: "M2 3h12v10H2zM2 6.5h12M2 10h12M8 3v10",
  image: "M2 3h12v10H2zM2 11l3.5-3.5 3 3 2-2L14 12M10.5 6.2a.7.7 0 1 0 0-.01",
};

const SHORTCUTS: Partial<Record<FormatAction, [string, string]>> = {
  bold: ["Control+B", "Meta+B"],
  italic: ["Control+I", "Meta+I"],
};

const ACTIONS: FormatAction[] = ["heading", "bold", "italic", "link", "bullets", "checklist", "code", "table"];

function Icon({ path }: { path: string }) {
  return (
    <svg viewBox="0 0 16 16" width="16" height="16" aria-hidden="true" focusable="false">
      <path d={path} fill="none" stroke="currentColor" stroke-width="1.5" stroke-linecap="round" stroke-linejoin="round" />
    </svg>
  );
}

export function Toolbar({ view, onFiles }: { view: EditorView; onFiles: (files: File[], at: number) => void }) {
  const [active, setActive] = useState(0);
  const bar = useRef<HTMLDivElement>(null);
  const picker = useRef<HTMLInputElement>(null);
  const names: Record<FormatAction | "image", string> = {
    heading: t("editor.format.heading"),
    bold: t("editor.format.bold"),
    italic: t("editor.format.italic"),
    link: t("editor.format.link"),
    bullets: t("editor.format.bullets"),
    checklist: t("editor.format.checklist"),
    code: t("editor.format.code"),
    table: t("editor.format.table"),
    image: t("upload.image"),
  };
  const items = [...ACTIONS, "image" as const];

  function run(what: FormatAction | "image") {
    if (what === "image") picker.current?.click();
    else format(view, what, { column: (n) => t("editor.table_column", { n }) });
  }

  // Arrow keys move the focus between the buttons (one Tab stop for the whole toolbar).
  function onKeyDown(e: KeyboardEvent) {
    const moves: Record<string, number> = { ArrowRight: active + 1, ArrowLeft: active - 1, Home: 0, End: items.length - 1 };
    if (!(e.key in moves)) return;
    e.preventDefault();
    const next = (moves[e.key]! + items.length) % items.length;
    setActive(next);
    bar.current?.querySelectorAll("button")[next]?.focus();
  }

  return (
    <div class="editor-toolbar" role="toolbar" aria-label={t("editor.toolbar")} ref={bar} onKeyDown={onKeyDown}>
      {items.map((what, i) => {
        const keys = what === "image" ? undefined : SHORTCUTS[what];
        const hint = keys ? `${names[what]} (${mac ? "⌘" + keys[1].slice(-1) : keys[0].replace("Control", "Ctrl")})` : names[what];
        return (
          <button
            key={what}
            type="button"
            aria-label={names[what]}
            aria-keyshortcuts={keys?.join(" ")}
            title={hint}
            tabIndex={i === active ? 0 : -1}
            data-format={what}
            // Keep the focus (and the visible selection) in the source.
            onMouseDown={(e) => e.preventDefault()}
            onFocus={() => setActive(i)}
            onClick={() => run(what)}
          >
            <Icon path={ICONS[what]} />
          </button>
        );
      })}
      <input
        ref={picker}
        type="file"
        accept={uploadTypes().join(",")}
        multiple
        hidden
        tabIndex={-1}
        aria-hidden="true"
        data-testid="image-picker"
        onChange={(e) => {
          const files = [...(e.currentTarget.files ?? [])];
          e.currentTarget.value = "";
          if (files.length) onFiles(files, view.state.selection.main.head);
        }}
      />
    </div>
  );
}
