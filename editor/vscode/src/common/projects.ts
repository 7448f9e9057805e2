/**
 * Which projects the open workspace folders belong to (`lecode/project/info` per folder).
 *
 * Folders of one project (nested folders, linked worktrees of one checkout) share one memory, so
 * the UI shows each project once and reaches it through its first folder, in workspace order.
 */
import * as vscode from "vscode";
import type { ProjectInfoResult } from "./protocol";
import { Requests } from "./protocol";
import { errorMessage } from "./errors";
import { type RequestSender, request } from "./requests";

export interface FolderRef {
  /** The folder's URI as a string, as sent in `workspaceUri`. */
  uri: string;
  name: string;
}

export interface Project extends ProjectInfoResult {
  /** The first workspace folder of this project: the `workspaceUri` the UI uses for it. */
  folderUri: string;
  /** Every open folder of this project, in workspace order. */
  folders: FolderRef[];
}

export interface FolderProblem {
  folder: FolderRef;
  message: string;
}

export interface ProjectsState {
  projects: Project[];
  problems: FolderProblem[];
}

/** Ask the server about every folder and group the folders by project root. */
export async function resolveProjects(
  sender: RequestSender,
  folders: readonly FolderRef[],
): Promise<ProjectsState> {
  const answers = await Promise.allSettled(
    folders.map((folder) => request(sender, Requests.projectInfo, { workspaceUri: folder.uri })),
  );
  const byRoot = new Map<string, Project>();
  const problems: FolderProblem[] = [];
  answers.forEach((answer, index) => {
    const folder = folders[index];
    if (answer.status === "rejected") {
      problems.push({ folder, message: errorMessage(answer.reason) });
      return;
    }
    const known = byRoot.get(answer.value.projectRoot);
    if (known) {
      known.folders.push(folder);
    } else {
      byRoot.set(answer.value.projectRoot, { ...answer.value, folderUri: folder.uri, folders: [folder] });
    }
  });
  return { projects: [...byRoot.values()], problems };
}

/** The projects of the current workspace folders, re-resolved on `refresh()`. */
export class ProjectIndex implements vscode.Disposable {
  private state: ProjectsState = { projects: [], problems: [] };
  private generation = 0;
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChange = this.changed.event;

  constructor(
    private readonly sender: RequestSender,
    private readonly folders: () => readonly FolderRef[],
  ) {}

  get projects(): readonly Project[] {
    return this.state.projects;
  }

  get problems(): readonly FolderProblem[] {
    return this.state.problems;
  }

  /** Resolve the folders again. When refreshes overlap, the last one started wins. */
  async refresh(): Promise<void> {
    const generation = ++this.generation;
    const state = await resolveProjects(this.sender, this.folders());
    if (generation === this.generation) {
      this.state = state;
      this.changed.fire();
    }
  }

  /** Forget every project (the server stopped); fires onDidChange. */
  clear(): void {
    this.generation++;
    this.state = { projects: [], problems: [] };
    this.changed.fire();
  }

  /** The project an open folder belongs to. */
  projectOfFolder(folderUri: string): Project | undefined {
    return this.state.projects.find((project) => project.folders.some((f) => f.uri === folderUri));
  }

  projectByRoot(projectRoot: string): Project | undefined {
    return this.state.projects.find((project) => project.projectRoot === projectRoot);
  }

  dispose(): void {
    this.changed.dispose();
  }
}
