import { render } from "preact";
import "./styles.css";
import "./theme";
import { pageOfHref, prefetchView } from "./prefetch";
import { App } from "./app";
import { boot, holdTreeForFirstPage } from "./session";

// A page's URL: fetch its content while the session, messages and workspaces load (in
// the workspace the URL names, else the user's default, the one the app opens; a 401 or
// a 404 here is harmless), and let the page tree wait until the page is shown.
const first = pageOfHref(window.location.pathname);
if (first) {
  prefetchView(first.slug, first.ws);
  holdTreeForFirstPage();
}

const root = document.getElementById("app")!;
boot().then(
  () => render(<App />, root),
  () => {
    // No server (or a broken one): say so plainly; the messages may not have loaded.
    root.textContent = "Cairn could not be reached. Please reload the page.";
  },
);
