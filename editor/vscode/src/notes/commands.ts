/**
 * The palette commands over memory files (category "lecode"). Each one picks the project, asks
 * what it needs, and opens a `lecode-memory:` document; failures are shown as the server's
 * sentence, never as a stack.
 */
import * as vscode from "vscode";
import * as api from "../common/vscodeapi";
import { errorMessage } from "../common/errors";
import type { Project } from "../common/projects";
import type { SearchHit } from "../common/protocol";
import { Requests } from "../common/protocol";
import { type RequestSender, request } from "../common/requests";
import { TRANSCRIPT_SCHEME, parseTranscriptUri } from "../sessions/uri";
import type { MemoryNode } from "../views/memoryTree";
import { MEMORY_FILE, SCRATCHPAD_FILE, dailyLogFile, noteFile, noteNameProblem } from "./names";
import { SCHEME, memoryUri, parseMemoryUri, workspaceParams } from "./uri";

export interface ProjectSource {
  readonly projects: readonly Project[];
  projectOfFolder(folderUri: string): Project | undefined;
}

export interface CommandDeps {
  sender: RequestSender;
  projects: ProjectSource;
  /** The current time; its local date names today's log. */
  now: () => Date;
}

/** Returned when the user dismissed a prompt: the command then does nothing. */
export const CANCELLED = Symbol("cancelled");
type Folder = string | undefined;

/**
 * The workspace folder (the `workspaceUri`) a command is about: the tree node it was invoked
 * on; else the only project; else the project of the active editor; else the user's choice.
 * Undefined (no folder, so the server's default) when no project is known.
 */
export async function chooseFolder(
  deps: Pick<CommandDeps, "projects">,
  node?: MemoryNode,
): Promise<Folder | typeof CANCELLED> {
  if (node !== undefined) {
    return node.kind === "project" ? node.project.folderUri : node.folderUri;
  }
  const projects = deps.projects.projects;
  if (projects.length <= 1) {
    return projects[0]?.folderUri;
  }
  const active = api.activeDocumentUri();
  if (active !== undefined) {
    const folder =
      active.scheme === SCHEME
        ? parseMemoryUri(active).workspaceUri
        : active.scheme === TRANSCRIPT_SCHEME
          ? transcriptWorkspace(active)
          : api.getWorkspaceFolder(active)?.uri.toString();
    const project = folder === undefined ? undefined : deps.projects.projectOfFolder(folder);
    if (project !== undefined) {
      return project.folderUri;
    }
  }
  const picked = await api.showQuickPick(
    projects.map((project) => ({
      label: project.folders.map((folder) => folder.name).join(", "),
      description: project.projectRoot,
      project,
    })),
    { placeHolder: "Which project's memory?" },
  );
  return picked === undefined ? CANCELLED : picked.project.folderUri;
}

function transcriptWorkspace(uri: vscode.Uri): string | undefined {
  const location = parseTranscriptUri(uri);
  return "problem" in location ? undefined : location.workspaceUri;
}

/** What the note-name input box says about what the user typed (undefined when it is fine). */
export function validateNoteInput(value: string): string | undefined {
  return noteNameProblem(value.trim());
}

export interface SearchLocation {
  uri: vscode.Uri;
  /** 0-based, as VS Code counts lines; the server's `line` is 1-based. */
  line: number;
}

export function searchLocation(hit: SearchHit, folderUri: Folder): SearchLocation {
  return { uri: memoryUri(hit.file, folderUri), line: hit.line - 1 };
}

export interface SearchPick extends vscode.QuickPickItem {
  location: SearchLocation;
}

export function searchPicks(hits: readonly SearchHit[], folderUri: Folder): SearchPick[] {
  return hits.map((hit) => ({
    label: hit.text.trim() === "" ? "(blank line)" : hit.text.trim(),
    description: `${hit.file}:${hit.line}`,
    location: searchLocation(hit, folderUri),
  }));
}

export async function openMemoryFile(deps: CommandDeps, file: string, node?: MemoryNode): Promise<void> {
  const folder = await chooseFolder(deps, node);
  if (folder !== CANCELLED) {
    await api.openDocument(memoryUri(file, folder));
  }
}

export async function newNote(deps: CommandDeps, node?: MemoryNode): Promise<void> {
  const folder = await chooseFolder(deps, node);
  if (folder === CANCELLED) {
    return;
  }
  const name = await api.showInputBox({
    prompt: "Name of the new note (saved as notes/<name>.md)",
    placeHolder: "build",
    validateInput: validateNoteInput,
  });
  if (name === undefined) {
    return;
  }
  // The box validates as the user types, but an Enter can race the last validation.
  const problem = validateNoteInput(name);
  if (problem !== undefined) {
    await api.showErrorMessage(problem);
    return;
  }
  await api.openDocument(memoryUri(noteFile(name.trim()), folder));
}

export async function searchMemory(deps: CommandDeps, node?: MemoryNode): Promise<void> {
  const folder = await chooseFolder(deps, node);
  if (folder === CANCELLED) {
    return;
  }
  const pattern = await api.showInputBox({
    prompt: "Search memory for a regular expression (matched line by line)",
    placeHolder: "make|ninja",
    validateInput: (value) => (value === "" ? "Type a pattern" : undefined),
  });
  if (pattern === undefined || pattern === "") {
    return;
  }
  const result = await request(deps.sender, Requests.memorySearch, { ...workspaceParams(folder), pattern });
  if (result.hits.length === 0) {
    await api.showInformationMessage(`No memory line matches ${pattern}`);
    return;
  }
  const picked = await api.showQuickPick(searchPicks(result.hits, folder), {
    placeHolder: result.truncated
      ? `The first ${result.hits.length} matches; refine the pattern to see the rest`
      : `${result.hits.length} matching line${result.hits.length === 1 ? "" : "s"}`,
    matchOnDescription: true,
  });
  if (picked !== undefined) {
    await api.openDocument(picked.location.uri, picked.location.line);
  }
}

/** Run a command body and show any failure as a message (the server's sentence). */
export function guarded<A extends unknown[]>(body: (...args: A) => Promise<unknown>): (...args: A) => Promise<void> {
  return async (...args: A) => {
    try {
      await body(...args);
    } catch (error) {
      await api.showErrorMessage(errorMessage(error));
    }
  };
}

function asNode(value: unknown): MemoryNode | undefined {
  return typeof value === "object" && value !== null && "kind" in value ? (value as MemoryNode) : undefined;
}

/** The memory commands, by id; extension.ts registers them. */
export function memoryCommands(deps: CommandDeps): Record<string, (arg?: unknown) => Promise<void>> {
  return {
    "lecode.openMemory": guarded((arg?: unknown) => openMemoryFile(deps, MEMORY_FILE, asNode(arg))),
    "lecode.openScratchpad": guarded((arg?: unknown) => openMemoryFile(deps, SCRATCHPAD_FILE, asNode(arg))),
    "lecode.openTodayLog": guarded((arg?: unknown) => openMemoryFile(deps, dailyLogFile(deps.now()), asNode(arg))),
    "lecode.newNote": guarded((arg?: unknown) => newNote(deps, asNode(arg))),
    "lecode.searchMemory": guarded((arg?: unknown) => searchMemory(deps, asNode(arg))),
  };
}
