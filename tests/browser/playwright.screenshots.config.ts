// The screenshots of docs/screenshots (README.md shows some), taken from a running server:
//   CAIRN_URL=http://127.0.0.1:PORT npx playwright test -c playwright.screenshots.config.ts
// Not part of the main run (it rewrites files under docs/); tests/it/web_app.rs runs it with
// CAIRN_SCREENSHOTS_DIR set to a temporary directory.
import { defineConfig } from "@playwright/test";
import { baseConfig } from "./shared.config";

export default defineConfig({ ...baseConfig, testDir: "./screenshots" });
