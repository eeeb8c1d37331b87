// Rendered markdown (sanitised by DOMPurify inside renderMarkdown).
import { useEffect, useMemo, useRef } from "preact/hooks";
import { embedsVersion, lookupEmbed, watchEmbeds } from "../embeds";
import { catalogue, t } from "../i18n";
import { externalImages } from "../limits";
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
    text: t,
    embed: lookupEmbed,
  };
}

/** `lines`: mark every block with its source line (the editor's preview follows the
 *  source's scroll by them). */
export function useRendered(source: string, self?: string, dropTitle?: string, lines = false): Rendered {
  const known = useStore(titles); // re-render when pages appear or vanish (link styles)
  const hl = useStore(highlighter); // ... and once code highlighting has loaded
  const embeds = useStore(embedsVersion); // ... and when an embedded page has arrived
  const messages = useStore(catalogue); // ... and in another language (callout titles, placeholders)
  const external = useStore(externalImages); // ... and once it is known whether other sites' images show
  return useMemo(
    () => renderMarkdown(source, wikiEnv(self), dropTitle, lines),
    [source, self, known, hl, embeds, messages, external, dropTitle, lines],
  );
}

/** An uploaded image that does not load (not an upload of this workspace, or gone) is
 *  replaced by the "missing image" placeholder the renderer gives an image embed whose
 *  file is not an upload: an icon and the name, titled as missing. */
function showMissing(img: HTMLImageElement): void {
  const name = img.getAttribute("alt") || (img.getAttribute("src") ?? "").split("/").pop() || "";
  const title = t("embed.image_missing", { name });
  const box = document.createElement("span");
  box.className = "image-missing";
  box.setAttribute("role", "img");
  box.title = title;
  box.setAttribute("aria-label", title);
  const icon = document.createElement("span");
  icon.className = "image-missing-icon";
  const label = document.createElement("span");
  label.className = "image-missing-name";
  label.textContent = name;
  box.append(icon, label);
  img.replaceWith(box);
}

const isUpload = (el: EventTarget | null): el is HTMLImageElement =>
  el instanceof HTMLImageElement && (el.getAttribute("src") ?? "").startsWith("/uploads/");

/** Watches the images inside `host`: each upload that fails to load shows as missing. */
export function watchImages(host: HTMLElement): () => void {
  // Load errors do not bubble; they are caught on the way down.
  const onError = (e: Event) => {
    if (isUpload(e.target)) showMissing(e.target);
  };
  host.addEventListener("error", onError, true);
  return () => host.removeEventListener("error", onError, true);
}

/** Images of `host` that had already failed before it was watched. */
function checkImages(host: HTMLElement): void {
  for (const img of host.querySelectorAll("img")) {
    if (isUpload(img) && img.complete && img.naturalWidth === 0) showMissing(img);
  }
}

export function MarkdownBody({ html, class: cls }: { html: string; class?: string }) {
  const host = useRef<HTMLDivElement>(null);
  useEffect(() => watchImages(host.current!), []);
  useEffect(() => watchEmbeds(host.current!), []); // embedded pages load as they come into view
  useEffect(() => checkImages(host.current!), [html]);
  return <div ref={host} class={"markdown " + (cls ?? "")} dangerouslySetInnerHTML={{ __html: html }} />;
}
