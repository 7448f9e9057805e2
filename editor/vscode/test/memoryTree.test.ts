/**
 * The Memory tree: MEMORY.md, scratchpad.md, "Daily logs" and "Notes" per project, built from
 * lecode/memory/list, one root per project when folders belong to several projects.
 */
// covers P7 (memory tree view)
import { describe, expect, it } from "vitest";
import * as vscode from "vscode";
import { type Project, ProjectIndex } from "../src/common/projects";
import { Requests } from "../src/common/protocol";
import { MemoryTreeProvider, type MemoryNode, groupChildren, projectChildren, treeItem } from "../src/views/memoryTree";
import { FakeServer, project, serverError } from "./fakes";

const FOLDER = "file:///src/app";
const at = (file: string, bytes = 10) => ({ file, bytes, modified: "2026-11-29T10:00:00Z" });

function tree(server: FakeServer, projects: Project[], notRunning?: string) {
  return new MemoryTreeProvider(server, { projects, problems: [] }, { notRunning });
}

describe("projectChildren", () => {
  it("lists MEMORY.md, scratchpad.md, then the daily and notes groups", () => {
    const files = [at("MEMORY.md", 120), at("daily/2026-11-28.md"), at("daily/2026-11-29.md"), at("notes/build.md"), at("notes/api.md")];
    expect(projectChildren(FOLDER, files)).toEqual([
      { kind: "file", fileKind: "memory", file: "MEMORY.md", folderUri: FOLDER, info: at("MEMORY.md", 120) },
      { kind: "file", fileKind: "scratchpad", file: "scratchpad.md", folderUri: FOLDER, info: undefined },
      { kind: "group", group: "daily", folderUri: FOLDER, files: [at("daily/2026-11-29.md"), at("daily/2026-11-28.md")] },
      { kind: "group", group: "notes", folderUri: FOLDER, files: [at("notes/api.md"), at("notes/build.md")] },
    ]);
  });

  it("expands a group into its files", () => {
    const group = projectChildren(FOLDER, [at("notes/build.md")])[3] as Extract<MemoryNode, { kind: "group" }>;
    expect(groupChildren(group)).toEqual([
      { kind: "file", fileKind: "note", file: "notes/build.md", folderUri: FOLDER, info: at("notes/build.md") },
    ]);
  });
});

describe("treeItem", () => {
  it("opens a file node through the lecode-memory file system", () => {
    const item = treeItem({ kind: "file", fileKind: "note", file: "notes/build.md", folderUri: FOLDER, info: at("notes/build.md") });
    expect(item.label).toBe("build.md");
    expect(item.command?.command).toBe("vscode.open");
    expect(String(item.command?.arguments?.[0])).toBe("lecode-memory:/notes/build.md?file%3A%2F%2F%2Fsrc%2Fapp");
    expect(item.collapsibleState).toBe(vscode.TreeItemCollapsibleState.None);
  });

  it("labels a daily log by its date and marks a missing fixed file as not created yet", () => {
    expect(treeItem({ kind: "file", fileKind: "daily", file: "daily/2026-11-29.md", folderUri: FOLDER }).label).toBe("2026-11-29");
    expect(treeItem({ kind: "file", fileKind: "memory", file: "MEMORY.md", folderUri: FOLDER }).description).toBe("not created yet");
  });

  it("shows an empty group as a leaf", () => {
    const item = treeItem({ kind: "group", group: "notes", folderUri: FOLDER, files: [] });
    expect({ label: item.label, state: item.collapsibleState, description: item.description }).toEqual({
      label: "Notes",
      state: vscode.TreeItemCollapsibleState.None,
      description: "none yet",
    });
  });
});

describe("MemoryTreeProvider", () => {
  it("shows one project's files at the top level, listed through its first folder", async () => {
    const server = new FakeServer().on(Requests.memoryList, () => ({ files: [at("MEMORY.md")] }));
    const roots = await tree(server, [project("/src/app", [FOLDER, "file:///src/app/web"])]).getChildren();
    expect(roots.map((node) => node.kind)).toEqual(["file", "file", "group", "group"]);
    expect(server.calls).toEqual([{ method: "lecode/memory/list", params: { workspaceUri: FOLDER } }]);
  });

  it("shows two folders of one checkout as one project, without a project root node", async () => {
    const server = new FakeServer()
      .on(Requests.projectInfo, () => ({ projectRoot: "/src/app", slug: "app-1", storePath: "/cfg/memory/app-1", memoryEnabled: true }))
      .on(Requests.memoryList, () => ({ files: [at("notes/build.md")] }));
    const index = new ProjectIndex(server, () => [
      { uri: FOLDER, name: "app" },
      { uri: "file:///src/app-worktree", name: "app-worktree" },
    ]);
    await index.refresh();
    const roots = await new MemoryTreeProvider(server, index, { notRunning: undefined }).getChildren();
    expect(roots.map((node) => (node.kind === "group" ? node.group : node.kind === "file" ? node.file : node.kind))).toEqual([
      "MEMORY.md",
      "scratchpad.md",
      "daily",
      "notes",
    ]);
    expect(server.calls.filter((call) => call.method === Requests.memoryList)).toEqual([
      { method: "lecode/memory/list", params: { workspaceUri: FOLDER } },
    ]);
  });

  it("gives each of several projects a root node with its own files", async () => {
    const server = new FakeServer().on(Requests.memoryList, (params: { workspaceUri: string }) => ({
      files: params.workspaceUri === FOLDER ? [at("notes/app.md")] : [at("notes/lib.md")],
    }));
    const provider = tree(server, [project("/src/app", [FOLDER]), project("/src/lib", ["file:///src/lib"])]);
    const roots = await provider.getChildren();
    expect(roots.map((node) => (node.kind === "project" ? node.project.projectRoot : node.kind))).toEqual(["/src/app", "/src/lib"]);
    const libChildren = await provider.getChildren(roots[1]);
    const notes = libChildren[3] as Extract<MemoryNode, { kind: "group" }>;
    expect(notes.files.map((f) => f.file)).toEqual(["notes/lib.md"]);
  });

  it("says so when memory is turned off, without listing", async () => {
    const server = new FakeServer();
    const roots = await tree(server, [project("/src/app", [FOLDER], { memoryEnabled: false })]).getChildren();
    expect(roots).toEqual([{ kind: "message", text: expect.stringContaining("Memory is turned off"), folderUri: FOLDER }]);
    expect(server.calls).toEqual([]);
  });

  it("shows a failed listing as the server's sentence", async () => {
    const server = new FakeServer().on(Requests.memoryList, () => {
      throw serverError("symlink_refused", "the store folder is a symbolic link; lecode-ls refuses to follow links there");
    });
    const roots = await tree(server, [project("/src/app", [FOLDER])]).getChildren();
    expect(roots).toEqual([
      { kind: "message", text: "the store folder is a symbolic link; lecode-ls refuses to follow links there", folderUri: FOLDER },
    ]);
  });

  it("explains an empty tree while the server is not running", async () => {
    const roots = await tree(new FakeServer(), [], "lecode-ls did not start (spawn lecode-ls ENOENT).").getChildren();
    expect(roots).toEqual([{ kind: "message", text: "lecode-ls did not start (spawn lecode-ls ENOENT)." }]);
  });

  it("asks VS Code to redraw everything on refresh", () => {
    const provider = tree(new FakeServer(), []);
    const fired: unknown[] = [];
    provider.onDidChangeTreeData((node) => fired.push(node));
    provider.refresh();
    expect(fired).toEqual([undefined]);
  });
});
