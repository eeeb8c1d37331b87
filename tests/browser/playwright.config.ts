// Browser tests of the web app (tests/browser/app). Run against a real Cairn server
// that serves the built app, with registration open:
//   CAIRN_URL=http://127.0.0.1:PORT npx playwright test
// The closed-registration check has its own config (playwright.closed.config.ts).
// Debian's chromium is used; Playwright's own browsers are never downloaded.
import { defineConfig } from "@playwright/test";
import { baseConfig } from "./shared.config";

export default defineConfig({ ...baseConfig, testDir: "./app" });
