// Vite configuration of Cairn's web app (docs/web.md explains the choices).
//
// The app lives under /app/ on the Cairn server, which answers index.html for every
// unknown /app/... path. The dev and preview servers proxy the API to a running Cairn
// (CAIRN_API, default http://127.0.0.1:8090) so the session cookie is same-origin.
import { readFileSync } from "node:fs";
import { defineConfig, type Connect, type Plugin } from "vite";

const api = process.env.CAIRN_API || "http://127.0.0.1:8090";
const proxy = Object.fromEntries(
  ["/api", "/health", "/openapi.json", "/uploads", "/login", "/register"].map((p) => [p, { target: api, changeOrigin: false }]),
);

// The CSP the Cairn server sends with the app; the preview server sends it too, so that
// running the browser tests against `vite preview` proves the build works under it.
const CSP =
  "default-src 'self'; img-src 'self' data: blob: https:; style-src 'self' 'unsafe-inline'; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

// Development only: a Cairn binary embeds i18n/*.json when it is compiled, so one built
// before a catalogue changed serves old messages. This overlays the working tree's
// catalogues on /api/i18n answers (language choice stays the server's).
function i18nOverlay(): Plugin {
  const overlay: Connect.NextHandleFunction = (req, res, next) => {
    if (!req.url || !req.url.startsWith("/api/i18n")) return next();
    const headers: Record<string, string> = {};
    for (const h of ["cookie", "accept-language", "authorization"]) {
      const v = req.headers[h];
      if (typeof v === "string") headers[h] = v;
    }
    fetch(api + req.url, { headers })
      .then(async (r) => {
        const body = (await r.json()) as { language: string; messages: Record<string, string> };
        try {
          const file = new URL(`../i18n/${body.language}.json`, import.meta.url);
          body.messages = { ...body.messages, ...JSON.parse(readFileSync(file, "utf8")) };
        } catch {
          /* keep the server's messages */
        }
        res.setHeader("content-type", "application/json; charset=utf-8");
        res.statusCode = r.status;
        res.end(JSON.stringify(body));
      })
      .catch(() => next());
  };
  return {
    name: "cairn-i18n-overlay",
    configureServer(server) {
      server.middlewares.use(overlay);
    },
    configurePreviewServer(server) {
      server.middlewares.use(overlay);
    },
  };
}

export default defineConfig({
  base: "/app/",
  plugins: [i18nOverlay()],
  server: { port: 5173, strictPort: true, proxy },
  preview: { port: 4173, strictPort: true, proxy, headers: { "Content-Security-Policy": CSP } },
  build: {
    outDir: "dist",
    assetsDir: "assets",
    emptyOutDir: true,
    target: "es2022",
    // Every modern browser has modulepreload; the polyfill would only add bytes.
    modulePreload: { polyfill: false },
    sourcemap: false,
    chunkSizeWarningLimit: 700,
  },
});
