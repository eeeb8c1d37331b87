// Cairn's mark, drawn inline: the same picture as favicon.svg, but as markup, so the
// browser fetches favicon.svg once (for the tab's icon) rather than again for each <img>.
export function Logo({ size }: { size: number }) {
  return (
    <svg class="logo" viewBox="0 0 32 32" width={size} height={size} aria-hidden="true" focusable="false">
      <rect width="32" height="32" rx="6" fill="#2f5d50" />
      <ellipse cx="16" cy="25" rx="10" ry="3.5" fill="#e8e4d8" />
      <ellipse cx="16" cy="18.5" rx="7.5" ry="3" fill="#d4cfbf" />
      <ellipse cx="16" cy="12.5" rx="5.5" ry="2.6" fill="#e8e4d8" />
      <ellipse cx="16" cy="7.5" rx="3.5" ry="2" fill="#d4cfbf" />
    </svg>
  );
}
