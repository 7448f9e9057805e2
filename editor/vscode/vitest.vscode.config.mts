import { defineConfig } from "vitest/config";
import base from "./vitest.config.mts";

// The packaged extension in a real VS Code (code-server) in headless Chromium: `npm run test:vscode`
// after `npm run package`, with $LECODE_CODE_SERVER set (see test/vscode/install-code-server.sh).
export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: ["test/vscode/**/*.vscode.ts"],
    testTimeout: 300_000,
    hookTimeout: 300_000,
    fileParallelism: false,
  },
});
