/** Memory file names: today's log, note names typed by the user, and which names are memory files. */
// covers P7 (palette commands)
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { dailyLogFile, fileKind, noteFile, noteNameProblem } from "../src/notes/names";

describe("dailyLogFile", () => {
  it("names the log by the local calendar date, zero-padded", () => {
    expect(dailyLogFile(new Date(2026, 0, 5, 12, 0))).toBe("daily/2026-01-05.md");
  });

  describe("in a time zone behind UTC", () => {
    let saved: string | undefined;
    beforeEach(() => {
      saved = process.env.TZ;
      process.env.TZ = "America/Los_Angeles"; // Node applies a changed TZ at once
    });
    afterEach(() => {
      if (saved === undefined) delete process.env.TZ;
      else process.env.TZ = saved;
    });

    it("uses the local date when the UTC date is already the next day", () => {
      // 05:00 UTC on 1 December is 21:00 on 30 November in Los Angeles.
      expect(dailyLogFile(new Date("2026-12-01T05:00:00Z"))).toBe("daily/2026-11-30.md");
    });
  });
});

describe("noteNameProblem", () => {
  it.each(["build", "build.md", "release-notes_2026", "v1.2", "café", "日本語"])("accepts %j", (name) => {
    expect(noteNameProblem(name)).toBeUndefined();
  });

  it.each([
    ["", "Name the note"],
    [".md", "Name the note"],
    ["a/b", "/ or \\"],
    ["a\\b", "/ or \\"],
    ["..", ".."],
    ["a..b", ".."],
    [".hidden", "start with ."],
    ["tab\there", "control"],
    ["nul\u0000", "control"],
    ["bidi\u202Eevil", "control"],
    ["zero\u200Bwidth", "control"],
    ["line\u2028sep", "control"],
    ["x".repeat(129), "128 bytes"],
    ["é".repeat(65), "128 bytes"],
  ])("refuses %j, saying why", (name, why) => {
    expect(noteNameProblem(name)).toContain(why);
  });

  it("allows a name of exactly 128 bytes", () => {
    expect(noteNameProblem("x".repeat(128))).toBeUndefined();
  });
});

describe("noteFile", () => {
  it("puts the note under notes/ with one .md suffix", () => {
    expect(noteFile("build")).toBe("notes/build.md");
    expect(noteFile("build.md")).toBe("notes/build.md");
  });

  it("normalizes to NFC as the server does", () => {
    expect(noteFile("cafe\u0301")).toBe("notes/caf\u00e9.md");
  });
});

describe("fileKind", () => {
  it.each([
    ["MEMORY.md", "memory"],
    ["scratchpad.md", "scratchpad"],
    ["daily/2026-11-29.md", "daily"],
    ["notes/build.md", "note"],
    ["notes/.hidden.md", undefined],
    ["notes/a/b.md", undefined],
    ["daily/today.md", undefined],
    ["MEMORY.md.bak", undefined],
    ["facts.db", undefined],
  ])("classifies %j as %s", (file, kind) => {
    expect(fileKind(file)).toBe(kind);
  });
});
