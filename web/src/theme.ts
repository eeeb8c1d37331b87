// Light and dark themes: prefers-color-scheme by default, or the user's choice kept in
// localStorage. The choice is applied as <html data-theme="light|dark">.
import { store } from "./store";

const KEY = "cairn.theme";
type ThemeChoice = "light" | "dark" | "system";

function stored(): ThemeChoice {
  try {
    const v = localStorage.getItem(KEY);
    return v === "light" || v === "dark" ? v : "system";
  } catch {
    return "system";
  }
}

const media = window.matchMedia("(prefers-color-scheme: dark)");
const themeChoice = store<ThemeChoice>(stored());
/** The theme in effect. */
export const theme = store<"light" | "dark">("light");

function effectiveTheme(): "light" | "dark" {
  const c = themeChoice.get();
  return c === "system" ? (media.matches ? "dark" : "light") : c;
}

function apply(): void {
  const t = effectiveTheme();
  document.documentElement.dataset.theme = t;
  theme.set(t);
}

function setTheme(choice: ThemeChoice): void {
  try {
    if (choice === "system") localStorage.removeItem(KEY);
    else localStorage.setItem(KEY, choice);
  } catch {
    /* private mode */
  }
  themeChoice.set(choice);
  apply();
}

/** Flips between light and dark (remembered). */
export function toggleTheme(): void {
  setTheme(effectiveTheme() === "dark" ? "light" : "dark");
}

media.addEventListener("change", apply);
apply();
