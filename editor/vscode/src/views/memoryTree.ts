/**
 * The "Memory" tree (view `lecode.memory` in the lecode activity-bar container).
 *
 * Per project: MEMORY.md, scratchpad.md, a "Daily logs" group (newest first) and a "Notes" group,
 * built from `lecode/memory/list`. With folders of several projects each project gets a root
 * node; folders of one project appear once (see ProjectIndex). Opening a file goes through the
 * `lecode-memory` file system.
 */
import * as vscode from "vscode";
import type { Project, ProjectIndex } from "../common/projects";
import type { MemoryFileInfo } from "../common/protocol";
import { Requests } from "../common/protocol";
import { type RequestSender, request } from "../common/requests";
import { type FileKind, MEMORY_FILE, SCRATCHPAD_FILE, fileKind } from "../notes/names";
import { memoryUri } from "../notes/uri";
import { type ServerStatus, projectChildrenOr, projectRoots } from "./projectRoots";

export type { ServerStatus } from "./projectRoots";

export type MemoryNode =
  | { kind: "project"; project: Project }
  | { kind: "file"; fileKind: FileKind; file: string; folderUri: string; info?: MemoryFileInfo }
  | { kind: "group"; group: "daily" | "notes"; folderUri: string; files: MemoryFileInfo[] }
  | { kind: "message"; text: string; folderUri?: string };

/** The children of one project: the two fixed files, then the two groups. */
export function projectChildren(folderUri: string, files: readonly MemoryFileInfo[]): MemoryNode[] {
  const byName = new Map(files.map((info) => [info.file, info]));
  const daily = files.filter((info) => fileKind(info.file) === "daily");
  const notes = files.filter((info) => fileKind(info.file) === "note");
  return [
    { kind: "file", fileKind: "memory", file: MEMORY_FILE, folderUri, info: byName.get(MEMORY_FILE) },
    { kind: "file", fileKind: "scratchpad", file: SCRATCHPAD_FILE, folderUri, info: byName.get(SCRATCHPAD_FILE) },
    // Daily log names sort by date, so the newest is the last by name.
    { kind: "group", group: "daily", folderUri, files: [...daily].sort((a, b) => b.file.localeCompare(a.file)) },
    { kind: "group", group: "notes", folderUri, files: [...notes].sort((a, b) => a.file.localeCompare(b.file)) },
  ];
}

/** The file nodes of a group, in the group's order. */
export function groupChildren(node: Extract<MemoryNode, { kind: "group" }>): MemoryNode[] {
  return node.files.map((info) => ({
    kind: "file",
    fileKind: node.group === "daily" ? "daily" : "note",
    file: info.file,
    folderUri: node.folderUri,
    info,
  }));
}

function fileLabel(node: Extract<MemoryNode, { kind: "file" }>): string {
  switch (node.fileKind) {
    case "daily":
      return node.file.slice("daily/".length, -".md".length);
    case "note":
      return node.file.slice("notes/".length);
    default:
      return node.file;
  }
}

function plural(count: number, one: string): string {
  return `${count} ${one}${count === 1 ? "" : "s"}`;
}

export function treeItem(node: MemoryNode): vscode.TreeItem {
  switch (node.kind) {
    case "project": {
      const name = node.project.projectRoot.split(/[\\/]/).filter(Boolean).pop() ?? node.project.projectRoot;
      const item = new vscode.TreeItem(name, vscode.TreeItemCollapsibleState.Expanded);
      item.description = node.project.projectRoot;
      item.tooltip = `Memory of ${node.project.projectRoot}\nStored in ${node.project.storePath}`;
      item.iconPath = new vscode.ThemeIcon("repo");
      item.contextValue = "lecode.project";
      return item;
    }
    case "group": {
      const empty = node.files.length === 0;
      const item = new vscode.TreeItem(
        node.group === "daily" ? "Daily logs" : "Notes",
        empty ? vscode.TreeItemCollapsibleState.None : vscode.TreeItemCollapsibleState.Collapsed,
      );
      item.description = empty ? "none yet" : plural(node.files.length, node.group === "daily" ? "log" : "note");
      item.iconPath = new vscode.ThemeIcon(node.group === "daily" ? "calendar" : "notebook");
      item.contextValue = `lecode.group.${node.group}`;
      return item;
    }
    case "file": {
      const uri = memoryUri(node.file, node.folderUri);
      const item = new vscode.TreeItem(fileLabel(node), vscode.TreeItemCollapsibleState.None);
      item.resourceUri = uri;
      item.description = node.info === undefined ? "not created yet" : undefined;
      item.tooltip =
        node.info === undefined
          ? `${node.file} does not exist yet; saving it creates it`
          : `${node.file}: ${plural(node.info.bytes, "byte")}, modified ${new Date(node.info.modified).toLocaleString()}`;
      item.command = { command: "vscode.open", title: "Open", arguments: [uri] };
      item.contextValue = "lecode.file";
      return item;
    }
    case "message": {
      const item = new vscode.TreeItem(node.text, vscode.TreeItemCollapsibleState.None);
      item.iconPath = new vscode.ThemeIcon("info");
      item.tooltip = node.text;
      return item;
    }
  }
}

/** Why there is nothing to show, when the server is not there to ask. */
export class MemoryTreeProvider implements vscode.TreeDataProvider<MemoryNode>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<MemoryNode | undefined>();
  readonly onDidChangeTreeData = this.changed.event;

  constructor(
    private readonly sender: RequestSender,
    private readonly projects: Pick<ProjectIndex, "projects" | "problems">,
    private readonly status: ServerStatus,
  ) {}

  refresh(): void {
    this.changed.fire(undefined);
  }

  getTreeItem(node: MemoryNode): vscode.TreeItem {
    return treeItem(node);
  }

  async getChildren(node?: MemoryNode): Promise<MemoryNode[]> {
    if (node === undefined) {
      return this.roots();
    }
    switch (node.kind) {
      case "project":
        return this.filesOf(node.project);
      case "group":
        return groupChildren(node);
      default:
        return [];
    }
  }

  private roots(): Promise<MemoryNode[]> {
    return projectRoots(this.status, this.projects, (project) => this.filesOf(project));
  }

  private filesOf(project: Project): Promise<MemoryNode[]> {
    return projectChildrenOr(project, async (folderUri) => {
      const listing = await request(this.sender, Requests.memoryList, { workspaceUri: folderUri });
      return projectChildren(folderUri, listing.files);
    });
  }

  dispose(): void {
    this.changed.dispose();
  }
}
