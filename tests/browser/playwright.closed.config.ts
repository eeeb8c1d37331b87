// The register screen of a server started with DISABLE_REGISTRATION=1:
//   CAIRN_URL=http://127.0.0.1:PORT npx playwright test -c playwright.closed.config.ts
import { defineConfig } from "@playwright/test";
import { baseConfig } from "./shared.config";

export default defineConfig({ ...baseConfig, testDir: "./app-closed" });
