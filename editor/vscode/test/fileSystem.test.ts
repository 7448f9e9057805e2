/**
 * The lecode-memory file system: URIs map to store-relative files and workspace folders, and
 * every read, stat and save is the matching lecode-ls request with the right params.
 */
// covers P7 (memory files open and save through the server)
import { describe, expect, it } from "vitest";
import * as vscode from "vscode";
import { Requests } from "../src/common/protocol";
import { MemoryFileSystem } from "../src/notes/fileSystem";
import { memoryUri, parseMemoryUri } from "../src/notes/uri";
import { FakeServer, serverError } from "./fakes";

const FOLDER = "file:///home/me/project";
const OTHER_FOLDER = "file:///home/me/project/sub";

function listing(...files: [string, number][]) {
  return { files: files.map(([file, bytes]) => ({ file, bytes, modified: "2026-11-29T10:00:00.250000Z" })) };
}

function provider(server: FakeServer, roots: Record<string, string> = {}) {
  return new MemoryFileSystem(server, {
    projectOfFolder: (folder) => (folder in roots ? { projectRoot: roots[folder] } : undefined),
  });
}

describe("memory URIs", () => {
  it("carry the store-relative file in the path and the workspace folder in the query", () => {
    const uri = memoryUri("notes/build.md", FOLDER);
    expect(uri.scheme).toBe("lecode-memory");
    expect(uri.path).toBe("/notes/build.md");
    expect(uri.toString()).toBe("lecode-memory:/notes/build.md?file%3A%2F%2F%2Fhome%2Fme%2Fproject");
    expect(parseMemoryUri(vscode.Uri.parse(uri.toString()))).toEqual({ file: "notes/build.md", workspaceUri: FOLDER });
  });

  it("leave the folder out when there is none, so the server uses its default", () => {
    expect(parseMemoryUri(memoryUri("MEMORY.md"))).toEqual({ file: "MEMORY.md" });
  });

  it("keep a folder URI with escaped characters intact", () => {
    const folder = "file:///home/me/my%20project%23x";
    expect(parseMemoryUri(vscode.Uri.parse(memoryUri("MEMORY.md", folder).toString()))).toEqual({
      file: "MEMORY.md",
      workspaceUri: folder,
    });
  });
});

describe("readFile", () => {
  it("sends lecode/memory/read with the file and folder and returns the content as UTF-8", async () => {
    const server = new FakeServer().on(Requests.memoryRead, () => ({ file: "notes/build.md", content: "Run `make` — vite\n", exists: true }));
    const bytes = await provider(server).readFile(memoryUri("notes/build.md", FOLDER));
    expect(server.calls).toEqual([{ method: "lecode/memory/read", params: { workspaceUri: FOLDER, file: "notes/build.md" } }]);
    expect(new TextDecoder().decode(bytes)).toBe("Run `make` — vite\n");
  });

  it("reads a missing MEMORY.md as an empty document", async () => {
    const server = new FakeServer().on(Requests.memoryRead, () => ({ file: "MEMORY.md", content: "", exists: false }));
    expect(await provider(server).readFile(memoryUri("MEMORY.md", FOLDER))).toEqual(new Uint8Array());
  });

  it("turns a server error into a FileSystemError carrying the server's sentence", async () => {
    const server = new FakeServer().on(Requests.memoryRead, () => {
      throw serverError("memory_disabled", "memory is disabled: [memory] enabled = false");
    });
    await expect(provider(server).readFile(memoryUri("MEMORY.md", FOLDER))).rejects.toMatchObject({
      code: "Unavailable",
      message: "memory is disabled: [memory] enabled = false",
    });
  });
});

describe("writeFile", () => {
  it("replaces the file through lecode/memory/write, so the server keeps a .bak", async () => {
    const server = new FakeServer().on(Requests.memoryWrite, () => ({ file: "scratchpad.md", bytes: 7 }));
    await provider(server).writeFile(memoryUri("scratchpad.md", FOLDER), new TextEncoder().encode("- [ ] é\n"));
    expect(server.calls).toEqual([
      {
        method: "lecode/memory/write",
        params: { workspaceUri: FOLDER, file: "scratchpad.md", content: "- [ ] é\n", mode: "replace" },
      },
    ]);
  });

  it("refuses bytes that are not UTF-8 without calling the server", async () => {
    const server = new FakeServer();
    await expect(provider(server).writeFile(memoryUri("MEMORY.md", FOLDER), new Uint8Array([0xff, 0xfe]))).rejects.toMatchObject({
      code: "NoPermissions",
    });
    expect(server.calls).toEqual([]);
  });

  it("reports an invalid name with the server's message", async () => {
    const server = new FakeServer().on(Requests.memoryWrite, () => {
      throw serverError("invalid_name", 'file: "notes/.x.md" starts with \'.\'', -32602);
    });
    await expect(provider(server).writeFile(memoryUri("notes/.x.md", FOLDER), new Uint8Array())).rejects.toMatchObject({
      code: "FileNotFound",
      message: 'file: "notes/.x.md" starts with \'.\'',
    });
  });
});

describe("stat", () => {
  it("gives an existing file its size and modification time from lecode/memory/list", async () => {
    const server = new FakeServer().on(Requests.memoryList, () => listing(["MEMORY.md", 120], ["notes/build.md", 12]));
    const stat = await provider(server).stat(memoryUri("notes/build.md", FOLDER));
    expect(server.calls).toEqual([{ method: "lecode/memory/list", params: { workspaceUri: FOLDER } }]);
    expect(stat).toEqual({
      type: vscode.FileType.File,
      size: 12,
      ctime: Date.parse("2026-11-29T10:00:00.250Z"),
      mtime: Date.parse("2026-11-29T10:00:00.250Z"),
    });
  });

  it("treats a missing memory file as an empty file, so it opens and is created on save", async () => {
    const server = new FakeServer().on(Requests.memoryList, () => listing());
    expect(await provider(server).stat(memoryUri("MEMORY.md", FOLDER))).toEqual({
      type: vscode.FileType.File,
      size: 0,
      ctime: 0,
      mtime: 0,
    });
  });

  it("answers for the store's folders without asking the server", async () => {
    const server = new FakeServer();
    const fs = provider(server);
    expect((await fs.stat(memoryUri("", FOLDER))).type).toBe(vscode.FileType.Directory);
    expect((await fs.stat(memoryUri("notes", FOLDER))).type).toBe(vscode.FileType.Directory);
    expect(server.calls).toEqual([]);
  });

  it("does not find a name that is not a memory file", async () => {
    const server = new FakeServer();
    await expect(provider(server).stat(memoryUri("MEMORY.md.bak", FOLDER))).rejects.toMatchObject({ code: "FileNotFound" });
    expect(server.calls).toEqual([]);
  });
});

describe("readDirectory", () => {
  it("lists the top level and each folder from lecode/memory/list", async () => {
    const server = new FakeServer().on(Requests.memoryList, () =>
      listing(["MEMORY.md", 1], ["daily/2026-11-29.md", 1], ["notes/build.md", 1], ["notes/deploy.md", 1]),
    );
    const fs = provider(server);
    expect(await fs.readDirectory(memoryUri("", FOLDER))).toEqual([
      ["MEMORY.md", vscode.FileType.File],
      ["daily", vscode.FileType.Directory],
      ["notes", vscode.FileType.Directory],
    ]);
    expect(await fs.readDirectory(memoryUri("notes", FOLDER))).toEqual([
      ["build.md", vscode.FileType.File],
      ["deploy.md", vscode.FileType.File],
    ]);
  });
});

describe("lecode/memory/didChange", () => {
  it("reports a change to every open URI of the changed files in that project", async () => {
    const server = new FakeServer().on(Requests.memoryRead, () => ({ file: "x", content: "", exists: true }));
    const fs = provider(server, { [FOLDER]: "/home/me/project", [OTHER_FOLDER]: "/home/me/project" });
    const events: vscode.FileChangeEvent[][] = [];
    fs.onDidChangeFile((batch) => events.push(batch));
    const scratch = memoryUri("scratchpad.md", FOLDER);
    const scratchViaSub = memoryUri("scratchpad.md", OTHER_FOLDER);
    const other = memoryUri("scratchpad.md", "file:///home/me/elsewhere");
    for (const uri of [scratch, scratchViaSub, other, memoryUri("MEMORY.md", FOLDER)]) {
      await fs.readFile(uri);
    }

    fs.handleDidChange({ workspaceUri: FOLDER, projectRoot: "/home/me/project", files: ["scratchpad.md"] });

    expect(events).toEqual([
      [
        { type: vscode.FileChangeType.Changed, uri: scratch },
        { type: vscode.FileChangeType.Changed, uri: scratchViaSub },
      ],
    ]);
  });

  it("stays silent when no open file changed", () => {
    const fs = provider(new FakeServer());
    const events: unknown[] = [];
    fs.onDidChangeFile((batch) => events.push(batch));
    fs.handleDidChange({ workspaceUri: FOLDER, projectRoot: "/home/me/project", files: ["MEMORY.md"] });
    expect(events).toEqual([]);
  });
});

describe("delete and rename", () => {
  it("are refused: memory files are managed by the server", () => {
    const fs = provider(new FakeServer());
    expect(() => fs.delete()).toThrow(expect.objectContaining({ code: "NoPermissions" }));
    expect(() => fs.rename()).toThrow(expect.objectContaining({ code: "NoPermissions" }));
  });
});
