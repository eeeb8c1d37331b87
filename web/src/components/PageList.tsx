// A list of links to pages, or a line saying there are none.
import type { PageRef } from "../api";
import { pageHref } from "../router";

export function PageList({ pages, none }: { pages: PageRef[]; none: string }) {
  if (!pages.length) return <p class="muted">{none}</p>;
  return (
    <ul>
      {pages.map((p) => (
        <li key={p.slug}>
          <a href={pageHref(p.slug)}>{p.title}</a>
        </li>
      ))}
    </ul>
  );
}
