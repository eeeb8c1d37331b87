import type { PlaywrightTestConfig } from "@playwright/test";

const baseURL = process.env.CAIRN_URL;
if (!baseURL) throw new Error("set CAIRN_URL to the Cairn server under test, e.g. http://127.0.0.1:8090");

export const baseConfig: PlaywrightTestConfig = {
  workers: 1,
  // One retry: a spec that fails twice fails the run; one that passes on its retry is
  // reported as "flaky" and tests/it/web_app.rs prints it as a warning to look into.
  retries: 1,
  fullyParallel: false,
  reporter: "list",
  timeout: 60_000,
  expect: { timeout: 10_000 },
  use: {
    baseURL,
    headless: true,
    browserName: "chromium",
    locale: "en-US",
    viewport: { width: 1280, height: 860 },
    actionTimeout: 15_000,
    navigationTimeout: 30_000,
    launchOptions: {
      executablePath: process.env.CHROMIUM_BIN || "/usr/bin/chromium",
      args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
    },
  },
};
