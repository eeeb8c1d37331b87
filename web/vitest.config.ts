// The web app's unit tests (`npm test`): modules of src/ against cases, in a DOM made by
// happy-dom (rendering sanitises with DOMPurify, which needs one). The browser suite in
// tests/browser/ tests the app as people use it.
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    environment: "happy-dom",
    include: ["src/**/*.test.ts"],
  },
});
