// Rendered markdown (sanitised by DOMPurify inside renderMarkdown).
import { useMemo } from "preact/hooks";
import { t } from "../i18n";
import { highlighter, renderMarkdown, type Rendered } from "../markdown/render";
import { pageHref } from "../router";
import { pageExists, titles } from "../session";
import { useStore } from "../store";

export function wikiEnv(self?: string) {
  return {
    exists: pageExists,
    href: (slug: string, title?: string) =>
      title !== undefined ? `${pageHref(slug)}?${new URLSearchParams({ title })}` : pageHref(slug),
    missingTitle: (target: string) => t("page.wikilink_missing", { title: target }),
    self,
  };
}

/** `lines`: mark every block with its source line (the editor's preview follows the
 *  source's scroll by them). */
export function useRendered(source: string, self?: string, dropTitle?: string, lines = false): Rendered {
  const known = useStore(titles); // re-render when pages appear or vanish (link styles)
  const hl = useStore(highlighter); // ... and once code highlighting has loaded
  return useMemo(() => renderMarkdown(source, wikiEnv(self), dropTitle, lines), [source, self, known, hl, dropTitle, lines]);
}

export function MarkdownBody({ html, class: cls }: { html: string; class?: string }) {
  return <div class={"markdown " + (cls ?? "")} dangerouslySetInnerHTML={{ __html: html }} />;
}
