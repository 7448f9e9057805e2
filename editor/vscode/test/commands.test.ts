/**
 * The palette commands: each opens the right memory file of the right project, the note name is
 * checked before anything is opened, search hits become locations, and failures are messages.
 */
// covers P7 (palette commands)
import { beforeEach, describe, expect, it, vi } from "vitest";
import * as vscode from "vscode";
import * as api from "../src/common/vscodeapi";
import type { Project } from "../src/common/projects";
import { Requests } from "../src/common/protocol";
import { CANCELLED, type CommandDeps, chooseFolder, memoryCommands, searchPicks } from "../src/notes/commands";
import { memoryUri } from "../src/notes/uri";
import { transcriptUri } from "../src/sessions/uri";
import { FakeServer, project, serverError } from "./fakes";

vi.mock("../src/common/vscodeapi");

const APP = "file:///src/app";
const LIB = "file:///src/lib";

function deps(server: FakeServer, projects: Project[]): CommandDeps {
  return {
    sender: server,
    projects: {
      projects,
      projectOfFolder: (uri) => projects.find((p) => p.folders.some((f) => f.uri === uri)),
    },
    now: () => new Date(2026, 10, 29, 9, 30),
  };
}

const opened = () => vi.mocked(api.openDocument).mock.calls.map(([uri, line]) => [uri.toString(), line]);

beforeEach(() => {
  vi.mocked(api.openDocument).mockResolvedValue(undefined);
});

describe("the open commands", () => {
  it.each([
    ["lecode.openMemory", "MEMORY.md"],
    ["lecode.openScratchpad", "scratchpad.md"],
    ["lecode.openTodayLog", "daily/2026-11-29.md"],
  ])("%s opens %s of the only project", async (command, file) => {
    await memoryCommands(deps(new FakeServer(), [project("/src/app", [APP])]))[command]();
    expect(opened()).toEqual([[memoryUri(file, APP).toString(), undefined]]);
  });

  it("open the file of the tree node they were invoked on", async () => {
    const commands = memoryCommands(deps(new FakeServer(), [project("/src/app", [APP]), project("/src/lib", [LIB])]));
    await commands["lecode.openMemory"]({ kind: "project", project: project("/src/lib", [LIB]) });
    expect(opened()).toEqual([[memoryUri("MEMORY.md", LIB).toString(), undefined]]);
  });

  it("show a failure to open as the error's message only", async () => {
    vi.mocked(api.openDocument).mockRejectedValue(serverError("store_error", "file: could not read MEMORY.md (Permission denied)"));
    await memoryCommands(deps(new FakeServer(), [project("/src/app", [APP])]))["lecode.openMemory"]();
    expect(vi.mocked(api.showErrorMessage).mock.calls).toEqual([["file: could not read MEMORY.md (Permission denied)"]]);
  });
});

describe("chooseFolder", () => {
  const projects = [project("/src/app", [APP, "file:///src/app/web"]), project("/src/lib", [LIB])];

  it("uses the project of the active editor's file when there are several", async () => {
    vi.mocked(api.activeDocumentUri).mockReturnValue(vscode.Uri.parse("file:///src/app/web/index.ts"));
    vi.mocked(api.getWorkspaceFolder).mockReturnValue({ uri: vscode.Uri.parse("file:///src/app/web"), name: "web", index: 1 });
    expect(await chooseFolder(deps(new FakeServer(), projects))).toBe(APP);
  });

  it("uses the project of the active memory document", async () => {
    vi.mocked(api.activeDocumentUri).mockReturnValue(memoryUri("MEMORY.md", LIB));
    expect(await chooseFolder(deps(new FakeServer(), projects))).toBe(LIB);
  });

  it("uses the project of the active transcript document", async () => {
    vi.mocked(api.activeDocumentUri).mockReturnValue(
      transcriptUri({ sessionId: "20261129T100000Z-3f2a9c41", startSeq: 1, endSeq: 2, workspaceUri: LIB }),
    );
    expect(await chooseFolder(deps(new FakeServer(), projects))).toBe(LIB);
  });

  it("otherwise asks, and a dismissed question cancels the command", async () => {
    vi.mocked(api.activeDocumentUri).mockReturnValue(undefined);
    vi.mocked(api.showQuickPick).mockResolvedValue(undefined);
    expect(await chooseFolder(deps(new FakeServer(), projects))).toBe(CANCELLED);
    const items = vi.mocked(api.showQuickPick).mock.calls[0][0] as unknown as { label: string; description: string }[];
    expect(items.map(({ label, description }) => ({ label, description }))).toEqual([
      { label: "app, web", description: "/src/app" },
      { label: "lib", description: "/src/lib" },
    ]);
  });

  it("sends no folder when no project is known, leaving the default to the server", async () => {
    expect(await chooseFolder(deps(new FakeServer(), []))).toBeUndefined();
  });
});

describe("lecode.newNote", () => {
  it("opens notes/<name>.md for a valid name", async () => {
    vi.mocked(api.showInputBox).mockResolvedValue("  deploy steps ");
    await memoryCommands(deps(new FakeServer(), [project("/src/app", [APP])]))["lecode.newNote"]();
    expect(opened()).toEqual([[memoryUri("notes/deploy steps.md", APP).toString(), undefined]]);
  });

  it("validates the name in the input box", async () => {
    vi.mocked(api.showInputBox).mockResolvedValue(undefined);
    await memoryCommands(deps(new FakeServer(), [project("/src/app", [APP])]))["lecode.newNote"]();
    const validate = vi.mocked(api.showInputBox).mock.calls[0][0].validateInput as (value: string) => string | undefined;
    expect(validate("../etc/passwd")).toContain("/ or \\");
    expect(validate("build")).toBeUndefined();
    expect(opened()).toEqual([]);
  });

  it("refuses an invalid name that slipped past the box, with a message", async () => {
    vi.mocked(api.showInputBox).mockResolvedValue(".secret");
    await memoryCommands(deps(new FakeServer(), [project("/src/app", [APP])]))["lecode.newNote"]();
    expect(opened()).toEqual([]);
    expect(vi.mocked(api.showErrorMessage).mock.calls[0][0]).toContain("start with .");
  });
});

describe("lecode.searchMemory", () => {
  const hits = [
    { file: "notes/build.md", line: 3, text: "  Run `make`." },
    { file: "MEMORY.md", line: 1, text: "" },
  ];

  it("maps each hit to its file and 0-based line", () => {
    expect(searchPicks(hits, APP)).toEqual([
      { label: "Run `make`.", description: "notes/build.md:3", location: { uri: memoryUri("notes/build.md", APP), line: 2 } },
      { label: "(blank line)", description: "MEMORY.md:1", location: { uri: memoryUri("MEMORY.md", APP), line: 0 } },
    ]);
  });

  it("sends the pattern to lecode/memory/search and opens the picked hit at its line", async () => {
    const server = new FakeServer().on(Requests.memorySearch, () => ({ hits, truncated: false }));
    vi.mocked(api.showInputBox).mockResolvedValue("make|ninja");
    vi.mocked(api.showQuickPick).mockImplementation(async (items) => items[0]);
    await memoryCommands(deps(server, [project("/src/app", [APP])]))["lecode.searchMemory"]();
    expect(server.calls).toEqual([{ method: "lecode/memory/search", params: { workspaceUri: APP, pattern: "make|ninja" } }]);
    expect(opened()).toEqual([[memoryUri("notes/build.md", APP).toString(), 2]]);
  });

  it("says when nothing matched", async () => {
    const server = new FakeServer().on(Requests.memorySearch, () => ({ hits: [], truncated: false }));
    vi.mocked(api.showInputBox).mockResolvedValue("zebra");
    await memoryCommands(deps(server, [project("/src/app", [APP])]))["lecode.searchMemory"]();
    expect(vi.mocked(api.showInformationMessage).mock.calls).toEqual([["No memory line matches zebra"]]);
    expect(api.showQuickPick).not.toHaveBeenCalled();
  });

  it("shows an invalid pattern as the server's sentence, not a stack", async () => {
    const server = new FakeServer().on(Requests.memorySearch, () => {
      throw serverError("invalid_pattern", "pattern: unterminated character set at position 0", -32602);
    });
    vi.mocked(api.showInputBox).mockResolvedValue("[");
    await memoryCommands(deps(server, [project("/src/app", [APP])]))["lecode.searchMemory"]();
    expect(vi.mocked(api.showErrorMessage).mock.calls).toEqual([["pattern: unterminated character set at position 0"]]);
  });
});
