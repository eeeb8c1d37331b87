// The markdown source editor (CodeMirror 6), loaded on demand by the editor screen so
// that viewing pages never downloads it.
import {
  autocompletion,
  pickedCompletion,
  type Completion,
  type CompletionContext,
  type CompletionResult,
} from "@codemirror/autocomplete";
import { isolateHistory } from "@codemirror/commands";
import { markdownKeymap, markdownLanguage } from "@codemirror/lang-markdown";
import { HighlightStyle, LanguageSupport, syntaxHighlighting } from "@codemirror/language";
import { tags } from "@lezer/highlight";
import { Compartment, EditorState, Prec, type Extension } from "@codemirror/state";
import { EditorView, keymap } from "@codemirror/view";
import { basicSetup } from "codemirror";
import { toggleWrap } from "./format";

// The rest of the editor's lazy chunk: the toolbar and the preview's scroll following.
export { Toolbar } from "./Toolbar";
export { followScroll, scrollPreviewTo, sourcePosition } from "./scrollSync";
export { collab, LiveSession, type LiveStatus } from "./live";

export interface EditorOptions {
  parent: HTMLElement;
  doc: string;
  dark: boolean;
  label: string;
  /** The document changed (read it with getDoc() when needed: a 1 MiB string per keystroke would cost). */
  onChange: () => void;
  onSave: () => void;
  /** Page titles for "[[" completion. */
  titles: () => string[];
  /** Tags for "#" completion. */
  tags: () => string[];
  /** Files pasted or dropped; the handler uploads them and inserts markdown. */
  onFiles: (files: File[], at: number) => void;
  /** More extensions (the co-editing binding). */
  extensions?: Extension[];
}

export interface SourceEditor {
  view: EditorView;
  getDoc(): string;
  setDoc(doc: string): void;
  insert(text: string, at?: number): void;
  /** Inserts `text` at `at` as a block: on a line of its own (one undo step). */
  insertBlock(text: string, at: number): void;
  /** A position that follows the edits made after it (e.g. where an upload will go). */
  track(pos: number): { readonly pos: number; release(): void };
  setDark(dark: boolean): void;
  focus(): void;
  destroy(): void;
}

function wikilinkCompletion(titles: () => string[]) {
  return (ctx: CompletionContext): CompletionResult | null => {
    const m = ctx.matchBefore(/\[\[[^\]\n|#]*$/);
    if (!m) return null;
    const options: Completion[] = titles().map((title) => ({ label: title, type: "text", apply: applyWikilink(title) }));
    return { from: m.from + 2, options, validFor: /^[^\]\n|#]*$/ };
  };
}

/** Completes `[[Get` to `[[Getting Started]]` with the cursor after the `]]` — also when
 *  the closing brackets were there already (typed, or added by bracket closing), which
 *  are replaced rather than doubled. Before a `|label` or `#section` only the title goes
 *  in. */
function applyWikilink(title: string) {
  return (view: EditorView, completion: Completion, from: number, to: number) => {
    const rest = view.state.sliceDoc(to, to + 2);
    const more = rest[0] === "|" || rest[0] === "#";
    const close = more ? 0 : rest === "]]" ? 2 : rest[0] === "]" ? 1 : 0;
    const insert = more ? title : title + "]]";
    view.dispatch({
      changes: { from, to: to + close, insert },
      selection: { anchor: from + insert.length },
      annotations: pickedCompletion.of(completion),
      userEvent: "input.complete",
      scrollIntoView: true,
    });
  };
}

function tagCompletion(tags: () => string[]) {
  return (ctx: CompletionContext): CompletionResult | null => {
    const m = ctx.matchBefore(/(?:^|[\s(])#[\p{L}\p{N}_\-/]*$/u);
    if (!m) return null;
    const hash = m.text.lastIndexOf("#");
    const from = m.from + hash + 1;
    if (from === ctx.pos && !ctx.explicit) return null; // "# " starts a heading
    return {
      from,
      options: tags().map((tag) => ({ label: tag, type: "keyword" })),
      validFor: /^[\p{L}\p{N}_\-/]*$/u,
    };
  };
}

// Markdown colours from the app's theme variables, so both themes read well.
const markdownStyle = HighlightStyle.define([
  { tag: tags.heading, fontWeight: "bold", color: "var(--hl-title)" },
  { tag: tags.strong, fontWeight: "bold" },
  { tag: tags.emphasis, fontStyle: "italic" },
  { tag: tags.strikethrough, textDecoration: "line-through" },
  { tag: [tags.link, tags.url], color: "var(--accent)" },
  { tag: [tags.monospace], color: "var(--hl-string)" },
  { tag: [tags.processingInstruction, tags.meta, tags.contentSeparator], color: "var(--hl-comment)" },
  { tag: [tags.quote], color: "var(--fg-soft)", fontStyle: "italic" },
  { tag: [tags.list, tags.labelName], color: "var(--hl-keyword)" },
  { tag: [tags.keyword], color: "var(--hl-keyword)" },
  { tag: [tags.string], color: "var(--hl-string)" },
  { tag: [tags.comment], color: "var(--hl-comment)" },
]);

// Files to upload. Every file but text goes to the server, which says which types it
// takes (415 otherwise): a refused file gets a clear message instead of being dropped
// without a word. Text files are left to CodeMirror, which inserts their text.
function filesOf(list: DataTransfer | null): File[] {
  const files = list ? [...list.files] : [];
  const text = (f: File) => f.type.startsWith("text/") || /\.(md|markdown|txt)$/i.test(f.name);
  return files.every(text) ? [] : files;
}

export function createEditor(opts: EditorOptions): SourceEditor {
  const theme = new Compartment();
  const tracked = new Set<{ pos: number }>();
  const themeFor = (dark: boolean) => EditorView.theme({}, { dark });
  const view = new EditorView({
    parent: opts.parent,
    state: EditorState.create({
      doc: opts.doc,
      extensions: [
        basicSetup,
        opts.extensions ?? [],
        // markdown() would also bundle the HTML, CSS and JavaScript languages (for HTML
        // inside markdown): the GFM language and its keymap alone are a fraction of that.
        new LanguageSupport(markdownLanguage),
        Prec.high(keymap.of(markdownKeymap)),
        syntaxHighlighting(markdownStyle),
        EditorView.lineWrapping,
        theme.of(themeFor(opts.dark)),
        EditorView.contentAttributes.of({ "aria-label": opts.label, "data-testid": "source-editor" }),
        autocompletion({ override: [wikilinkCompletion(opts.titles), tagCompletion(opts.tags)] }),
        Prec.highest(
          keymap.of([
            // Ctrl+B / Cmd+B (Meta too off a Mac, as the app's Ctrl/Cmd+S), replacing
            // basicSetup's Mod-i (select the enclosing syntax node).
            ...["Mod-b", "Meta-b"].map((key) => ({ key, preventDefault: true, run: (v: EditorView) => toggleWrap(v, "**") })),
            ...["Mod-i", "Meta-i"].map((key) => ({ key, preventDefault: true, run: (v: EditorView) => toggleWrap(v, "*") })),
            {
              key: "Mod-s",
              preventDefault: true,
              run: () => {
                opts.onSave();
                return true;
              },
            },
          ]),
        ),
        EditorView.updateListener.of((u) => {
          if (!u.docChanged) return;
          for (const spot of tracked) spot.pos = u.changes.mapPos(spot.pos, 1);
          opts.onChange();
        }),
        EditorView.domEventHandlers({
          paste(e, v) {
            const files = filesOf(e.clipboardData);
            if (!files.length) return false;
            e.preventDefault();
            opts.onFiles(files, v.state.selection.main.head);
            return true;
          },
          drop(e, v) {
            const files = filesOf(e.dataTransfer);
            if (!files.length) return false;
            e.preventDefault();
            const at = v.posAtCoords({ x: e.clientX, y: e.clientY }) ?? v.state.selection.main.head;
            opts.onFiles(files, at);
            return true;
          },
        }),
      ],
    }),
  });
  return {
    view,
    getDoc: () => view.state.doc.toString(),
    setDoc(doc) {
      view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: doc } });
    },
    insert(text, at) {
      const pos = Math.min(at ?? view.state.selection.main.head, view.state.doc.length);
      view.dispatch({ changes: { from: pos, insert: text }, selection: { anchor: pos + text.length } });
    },
    insertBlock(text, at) {
      const pos = Math.min(at, view.state.doc.length);
      const line = view.state.doc.lineAt(pos);
      const insert = (pos > line.from ? "\n" : "") + text + (pos < line.to || line.number < view.state.doc.lines ? "\n" : "");
      // The cursor moves past the insert only when it is there (an upload that ends while
      // the person types elsewhere leaves their cursor alone).
      const here = view.state.selection.main.empty && view.state.selection.main.head === pos;
      view.dispatch({
        changes: { from: pos, insert },
        selection: here ? { anchor: pos + insert.length } : undefined,
        annotations: isolateHistory.of("full"),
        userEvent: "input.paste",
        scrollIntoView: here,
      });
    },
    track(pos) {
      const spot = { pos };
      tracked.add(spot);
      return {
        get pos() {
          return spot.pos;
        },
        release: () => void tracked.delete(spot),
      };
    },
    setDark(dark) {
      view.dispatch({ effects: theme.reconfigure(themeFor(dark)) });
    },
    focus: () => view.focus(),
    destroy: () => view.destroy(),
  };
}
