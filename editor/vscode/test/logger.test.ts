/** The server's stderr in the "lecode" output channel, each line at the level the server gave it. */
// covers P7 (the server log is visible)
import { describe, expect, it } from "vitest";
import { type Logger, logServerLine } from "../src/common/logger";

describe("logServerLine", () => {
  it.each([
    ["2026-11-29 10:00:00,123 INFO lecode_ls.server: started", "info"],
    ["2026-11-29 10:00:00,123 WARNING lecode_ls.server: settings: memory.max_bytes: bad", "warn"],
    ["2026-11-29 10:00:00,123 DEBUG pygls: x", "debug"],
    ["2026-11-29 10:00:00,123 ERROR lecode_ls.server: failed", "error"],
    ["Traceback (most recent call last):", "error"],
  ])("logs %j at %s", (line, level) => {
    const seen: [string, string][] = [];
    const logger = Object.fromEntries(
      ["debug", "info", "warn", "error"].map((name) => [name, (message: string) => seen.push([name, message])]),
    ) as unknown as Logger;
    logServerLine(logger, line);
    expect(seen).toEqual([[level, line]]);
  });
});
