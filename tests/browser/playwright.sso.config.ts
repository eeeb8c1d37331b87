// Single sign-on, against a server started with OIDC_* settings pointing at
// oidc-provider.mjs (tests/it/web_app.rs starts both):
//   CAIRN_URL=http://127.0.0.1:PORT CAIRN_OIDC_ISSUER=http://127.0.0.1:PORT2 npx playwright test -c playwright.sso.config.ts
import { defineConfig } from "@playwright/test";
import { baseConfig } from "./shared.config";

export default defineConfig({ ...baseConfig, testDir: "./app-sso" });
