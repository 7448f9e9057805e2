/**
 * Verified project facts (`<relative path> contains "<JSON-escaped line>"`): the parser, the
 * refusal of paths that leave the workspace folder, and finding the claimed line.
 */
// covers P7 (recall-to-source navigation)
import { describe, expect, it } from "vitest";
import { claimUri, findLine, parseProjectFileFact } from "../src/facts/projectFile";

describe("parseProjectFileFact", () => {
  it("reads the path and the JSON-escaped line", () => {
    expect(parseProjectFileFact('src/build.py contains "CC = \\"clang\\"\\t# compiler"')).toEqual({
      ok: true,
      path: "src/build.py",
      segments: ["src", "build.py"],
      line: 'CC = "clang"\t# compiler',
    });
  });

  it("accepts a path that stays inside the folder", () => {
    expect(parseProjectFileFact('./src/../Makefile contains "all:"')).toMatchObject({ ok: true, segments: ["Makefile"] });
  });

  it.each([
    ["an absolute path", '/etc/passwd contains "root:x:0:0"'],
    ["a Windows drive", 'C:\\Windows\\win.ini contains "[fonts]"'],
    ["a URI", 'file:///etc/passwd contains "root"'],
  ])("refuses %s", (_what, text) => {
    expect(parseProjectFileFact(text)).toEqual({ ok: false, path: expect.any(String), problem: expect.stringContaining("not a relative path") });
  });

  it.each([['../secrets.env contains "KEY=1"'], ['src/../../other/file contains "x"'], ['src\\..\\..\\x contains "x"']])(
    "refuses %s, which climbs out of the folder",
    (text) => {
      expect(parseProjectFileFact(text)).toMatchObject({ ok: false, problem: expect.stringContaining("leads out of the workspace folder") });
    },
  );

  it.each([
    ["ordinary text", "We use tabs for indentation."],
    ["an unquoted line", "src/a.py contains import os"],
    ["a bad escape", 'src/a.py contains "\\q"'],
    ["a path with spaces", 'my file.py contains "x"'],
    ["text after the quote", 'a.py contains "x" and more'],
  ])("is not a project file claim for %s", (_what, text) => {
    expect(parseProjectFileFact(text)).toBeUndefined();
  });
});

describe("claimUri", () => {
  it("resolves the path against the workspace folder", () => {
    const claim = parseProjectFileFact('src/main.py contains "x"');
    if (!claim?.ok) throw new Error("expected a claim");
    expect(claimUri("file:///home/me/app", claim).toString()).toBe("file:///home/me/app/src/main.py");
  });
});

describe("findLine", () => {
  it("finds the first line equal to the claim, whatever the line endings", () => {
    expect(findLine("a\r\nimport os\r\nimport os\n", "import os")).toBe(1);
    expect(findLine("a\nimport os  \n", "import os")).toBeUndefined();
  });
});
