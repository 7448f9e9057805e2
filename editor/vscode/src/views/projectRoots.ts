// The top of every per-project tree (memory, facts): one project's nodes directly, or a node per
// project when the window holds several; then a message per folder that failed to resolve.
import { errorMessage } from "../common/errors";
import type { Project, ProjectIndex } from "../common/projects";

export type MessageNode = { kind: "message"; text: string; folderUri?: string };
export type ProjectNode = { kind: "project"; project: Project };

/** What a tree needs to know of the server: a sentence while it is not running. */
export interface ServerStatus {
  /** A sentence when the server is not running; undefined while it runs. */
  readonly notRunning: string | undefined;
}

export const MEMORY_OFF = "Memory is turned off (lecode.memory.enabled or [memory] enabled in config.toml)";

export async function projectRoots<N>(
  status: ServerStatus,
  index: Pick<ProjectIndex, "projects" | "problems">,
  childrenOf: (project: Project) => Promise<(N | MessageNode)[]>,
): Promise<(N | MessageNode | ProjectNode)[]> {
  if (status.notRunning !== undefined) {
    return [{ kind: "message", text: status.notRunning }];
  }
  const problems: MessageNode[] = index.problems.map((problem) => ({
    kind: "message",
    text: `${problem.folder.name}: ${problem.message}`,
    folderUri: problem.folder.uri,
  }));
  const projects = index.projects;
  if (projects.length === 1) {
    return [...(await childrenOf(projects[0])), ...problems];
  }
  return [...projects.map((project): ProjectNode => ({ kind: "project", project })), ...problems];
}

/** A project's children, or one message when its memory is off or the server refused. */
export async function projectChildrenOr<N>(
  project: Project,
  load: (folderUri: string) => Promise<N[]>,
): Promise<(N | MessageNode)[]> {
  const folderUri = project.folderUri;
  if (!project.memoryEnabled) {
    return [{ kind: "message", text: MEMORY_OFF, folderUri }];
  }
  try {
    return await load(folderUri);
  } catch (error) {
    return [{ kind: "message", text: errorMessage(error), folderUri }];
  }
}
