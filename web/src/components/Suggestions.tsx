// A page's suggestions panel: links worth adding, tags worth adding, and a summary
// (GET /api/pages/{slug}/suggest-links, /suggest-tags, /summary). Each part says the
// answer's `mode` (tfidf or embedding). Applying a suggestion is one edit against the
// page's current revision (base_revision): a link goes into a "See also" line, a tag is
// appended as #tag, the summary becomes the front matter's `summary:`; then the page reloads.
import type { ComponentChildren } from "preact";
import { useEffect, useState } from "preact/hooks";
import { api, type LinkSuggestions, type Page, type Summary, type TagSuggestions } from "../api";
import { failure, type ErrorText } from "../errors";
import { t, useI18n } from "../i18n";
import { frontMatterSummary, withSummary, yamlLoaded } from "../markdown/frontmatter";
import { deriveSlug } from "../markdown/slug";
import { pageHref } from "../router";
import { pagesChanged } from "../session";
import { useStore } from "../store";
import { FormError } from "./Form";

const SEE_ALSO = /^(\*\*)?see also(\*\*)?:/i;

/** The wikilink for a page: its title when the title leads to the slug, else the slug. */
function wikilink(slug: string, title: string): string {
  return deriveSlug(title) === slug && !/[\]|#]/.test(title) ? `[[${title}]]` : `[[${slug}]]`;
}

/** The content with a link added to its "See also" line (made at the end if missing). */
function withLink(content: string, link: string): string {
  const lines = content.replace(/\s+$/, "").split("\n");
  const at = lines.findIndex((l) => SEE_ALSO.test(l.trim()));
  if (at >= 0) lines[at] = `${lines[at]!.replace(/\s+$/, "")}, ${link}`;
  else lines.push("", `See also: ${link}`);
  return lines.join("\n").replace(/^\n+/, "") + "\n";
}

/** The content with a #tag added: on its last line when that holds only tags. */
function withTag(content: string, tag: string): string {
  const lines = content.replace(/\s+$/, "").split("\n");
  const last = lines[lines.length - 1] ?? "";
  if (/^(#[^\s#]+\s*)+$/.test(last.trim())) lines[lines.length - 1] = `${last.trim()} #${tag}`;
  else lines.push("", `#${tag}`);
  return lines.join("\n").replace(/^\n+/, "") + "\n";
}

function reason(text: string): string {
  return text
    .split(" and ")
    .map((part) => {
      const m = /^mentions "(.*)"$/.exec(part);
      if (m) return t("intel.reason.mentions", { title: m[1]! });
      if (part === "similar content") return t("intel.reason.similar");
      return part;
    })
    .join(", ");
}

function Mode({ mode }: { mode: string }) {
  return (
    <span class="badge" data-testid="intel-mode">
      {t("intel.mode", { mode })}
    </span>
  );
}

/** One part of the panel: its heading with the answer's mode, then loading, none, or the list. */
function Part<T extends { mode: string }>({
  id,
  title,
  answer,
  empty,
  children,
}: {
  id: string;
  title: string;
  answer: T | null;
  empty: (a: T) => boolean;
  children: (a: T) => ComponentChildren;
}) {
  return (
    <section aria-labelledby={id}>
      <h2 id={id}>
        {title} {answer && <Mode mode={answer.mode} />}
      </h2>
      {answer === null ? (
        <p class="muted">{t("common.loading")}</p>
      ) : empty(answer) ? (
        <p class="muted">{id === "intel-summary" ? t("intel.no_summary") : t("intel.no_suggestions")}</p>
      ) : (
        children(answer)
      )}
    </section>
  );
}

export function SuggestionsPanel({ page }: { page: Page }) {
  useI18n();
  useStore(yamlLoaded); // the summary's button reads the front matter
  const [links, setLinks] = useState<LinkSuggestions | null>(null);
  const [tags, setTags] = useState<TagSuggestions | null>(null);
  const [summary, setSummary] = useState<Summary | null>(null);
  const [error, setError] = useState<ErrorText>("");
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    let live = true;
    const fail = (e: unknown) => live && setError(failure(e));
    api.suggestLinks(page.slug).then((r) => live && setLinks(r), fail);
    api.suggestTags(page.slug).then((r) => live && setTags(r), fail);
    api.summary(page.slug).then((r) => live && setSummary(r), fail);
    return () => {
      live = false;
    };
  }, [page.slug, page.revision]);

  async function apply(edit: (content: string) => string, message: string) {
    setBusy(true);
    setError("");
    try {
      const current = await api.page(page.slug);
      await api.updatePage(page.slug, { content: edit(current.content), base_revision: current.revision, message });
      await pagesChanged();
    } catch (e) {
      setError(failure(e));
    } finally {
      setBusy(false);
    }
  }

  return (
    <aside class="suggestions card" aria-label={t("intel.suggestions")} data-testid="suggestions">
      <FormError error={error} />
      <Part id="intel-links" title={t("intel.suggested_links")} answer={links} empty={(a) => a.items.length === 0}>
        {(a) => (
          <ul class="suggestion-list">
            {a.items.map((s) => (
              <li key={s.slug}>
                <a href={pageHref(s.slug)}>{s.title}</a> <small class="muted">{reason(s.reason)}</small>
                <button
                  type="button"
                  class="small"
                  disabled={busy}
                  // The name starts with the visible word (WCAG 2.5.3, label in name), then
                  // says what applying does for those who cannot see the row.
                  aria-label={`${t("intel.apply")}: ${t("intel.add_link", { title: s.title })}`}
                  onClick={() => void apply((c) => withLink(c, wikilink(s.slug, s.title)), t("intel.add_link", { title: s.title }))}
                >
                  {t("intel.apply")}
                </button>
              </li>
            ))}
          </ul>
        )}
      </Part>
      <Part id="intel-tags" title={t("intel.suggested_tags")} answer={tags} empty={(a) => a.items.length === 0}>
        {(a) => (
          <ul class="suggestion-tags">
            {a.items.map((s) => (
              <li key={s.tag}>
                <button
                  type="button"
                  class="small tag-button"
                  disabled={busy}
                  aria-label={t("intel.add_tag", { tag: s.tag })}
                  onClick={() => void apply((c) => withTag(c, s.tag), t("intel.add_tag", { tag: s.tag }))}
                >
                  + #{s.tag}
                </button>
              </li>
            ))}
          </ul>
        )}
      </Part>
      <Part id="intel-summary" title={t("intel.summary")} answer={summary} empty={(a) => !a.summary}>
        {(a) => (
          <>
            <p data-testid="summary">{a.summary}</p>
            <p class="summary-apply">
              <button
                type="button"
                class="small"
                disabled={busy || withSummary(page.content, a.summary) === page.content}
                onClick={() => void apply((c) => withSummary(c, a.summary), t("intel.use_summary"))}
              >
                {t("intel.use_summary")}
              </button>
              {frontMatterSummary(page.content) === a.summary && <small class="muted">{t("intel.summary_in_use")}</small>}
            </p>
          </>
        )}
      </Part>
    </aside>
  );
}
