import { defineConfig } from "vitest/config";
import base from "./vitest.config.mts";

// End-to-end tests start a real lecode-ls (see test/e2e/server.e2e.ts): `npm run test:e2e`.
export default defineConfig({
  ...base,
  test: { ...base.test, include: ["test/e2e/**/*.e2e.ts"], testTimeout: 20_000, hookTimeout: 30_000 },
});
