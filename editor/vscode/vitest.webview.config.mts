import { defineConfig } from "vitest/config";
import base from "./vitest.config.mts";

// The chat page in headless Chromium (see test/webview/chat.webview.ts): `npm run test:webview`.
export default defineConfig({
  ...base,
  test: { ...base.test, include: ["test/webview/**/*.webview.ts"], testTimeout: 20_000, hookTimeout: 30_000 },
});
