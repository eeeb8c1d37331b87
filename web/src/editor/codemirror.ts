// The markdown source editor (CodeMirror 6), loaded on demand by the editor screen so
// that viewing pages never downloads it.
import { autocompletion, type Completion, type CompletionContext, type CompletionResult } from "@codemirror/autocomplete";
import { markdownKeymap, markdownLanguage } from "@codemirror/lang-markdown";
import { HighlightStyle, LanguageSupport, syntaxHighlighting } from "@codemirror/language";
import { tags } from "@lezer/highlight";
import { Compartment, EditorState, Prec } from "@codemirror/state";
import { EditorView, keymap } from "@codemirror/view";
import { basicSetup } from "codemirror";

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
  /** Images pasted or dropped; the handler uploads them and inserts markdown. */
  onFiles: (files: File[], at: number) => void;
}

export interface SourceEditor {
  view: EditorView;
  getDoc(): string;
  setDoc(doc: string): void;
  insert(text: string, at?: number): void;
  setDark(dark: boolean): void;
  focus(): void;
  destroy(): void;
}

function wikilinkCompletion(titles: () => string[]) {
  return (ctx: CompletionContext): CompletionResult | null => {
    const m = ctx.matchBefore(/\[\[[^\]\n|#]*$/);
    if (!m) return null;
    const after = ctx.state.sliceDoc(ctx.pos, ctx.pos + 2);
    const close = after === "]]" ? "" : "]]";
    const options: Completion[] = titles().map((title) => ({ label: title, type: "text", apply: title + close }));
    return { from: m.from + 2, options, validFor: /^[^\]\n|#]*$/ };
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

function imagesOf(list: DataTransfer | null): File[] {
  if (!list) return [];
  return [...list.files].filter((f) => f.type.startsWith("image/"));
}

export function createEditor(opts: EditorOptions): SourceEditor {
  const theme = new Compartment();
  const themeFor = (dark: boolean) => EditorView.theme({}, { dark });
  const view = new EditorView({
    parent: opts.parent,
    state: EditorState.create({
      doc: opts.doc,
      extensions: [
        basicSetup,
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
          if (u.docChanged) opts.onChange();
        }),
        EditorView.domEventHandlers({
          paste(e, v) {
            const files = imagesOf(e.clipboardData);
            if (!files.length) return false;
            e.preventDefault();
            opts.onFiles(files, v.state.selection.main.head);
            return true;
          },
          drop(e, v) {
            const files = imagesOf(e.dataTransfer);
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
    setDark(dark) {
      view.dispatch({ effects: theme.reconfigure(themeFor(dark)) });
    },
    focus: () => view.focus(),
    destroy: () => view.destroy(),
  };
}
