/** Workspace folders grouped by project: folders of one checkout share one memory and show once. */
// covers P7 (multi-root)
import { describe, expect, it } from "vitest";
import { ProjectIndex, resolveProjects } from "../src/common/projects";
import { Requests } from "../src/common/protocol";
import { FakeServer, serverError } from "./fakes";

function info(projectRoot: string) {
  const slug = `${projectRoot.split("/").pop()}-0123456789ab`;
  return { projectRoot, slug, storePath: `/cfg/memory/${slug}`, memoryEnabled: true };
}

const ROOTS: Record<string, string> = {
  "file:///src/app": "/src/app",
  "file:///src/app/web": "/src/app",
  "file:///src/lib": "/src/lib",
};

const server = () =>
  new FakeServer().on(Requests.projectInfo, (params: { workspaceUri: string }) => {
    if (params.workspaceUri === "file:///tmp/gone") {
      throw serverError("outside_workspace", "workspaceUri: file:///tmp/gone is outside every workspace folder", -32602);
    }
    return info(ROOTS[params.workspaceUri]);
  });

const folder = (uri: string) => ({ uri, name: uri.split("/").pop() as string });

describe("resolveProjects", () => {
  it("asks lecode/project/info once per folder", async () => {
    const fake = server();
    await resolveProjects(fake, [folder("file:///src/app"), folder("file:///src/lib")]);
    expect(fake.calls).toEqual([
      { method: "lecode/project/info", params: { workspaceUri: "file:///src/app" } },
      { method: "lecode/project/info", params: { workspaceUri: "file:///src/lib" } },
    ]);
  });

  it("shows folders of the same project once, reached through the first of them", async () => {
    const state = await resolveProjects(server(), [
      folder("file:///src/app"),
      folder("file:///src/lib"),
      folder("file:///src/app/web"),
    ]);
    expect(state.problems).toEqual([]);
    expect(state.projects).toEqual([
      { ...info("/src/app"), folderUri: "file:///src/app", folders: [folder("file:///src/app"), folder("file:///src/app/web")] },
      { ...info("/src/lib"), folderUri: "file:///src/lib", folders: [folder("file:///src/lib")] },
    ]);
  });

  it("keeps a folder the server refused as a problem with the server's sentence", async () => {
    const state = await resolveProjects(server(), [folder("file:///src/app"), folder("file:///tmp/gone")]);
    expect(state.projects.map((p) => p.projectRoot)).toEqual(["/src/app"]);
    expect(state.problems).toEqual([
      { folder: folder("file:///tmp/gone"), message: "workspaceUri: file:///tmp/gone is outside every workspace folder" },
    ]);
  });
});

describe("ProjectIndex", () => {
  it("finds the project of any of its folders and announces each refresh", async () => {
    const index = new ProjectIndex(server(), () => [folder("file:///src/app"), folder("file:///src/app/web")]);
    let announced = 0;
    index.onDidChange(() => announced++);
    await index.refresh();
    expect(index.projectOfFolder("file:///src/app/web")?.folderUri).toBe("file:///src/app");
    expect(index.projectByRoot("/src/app")?.folders).toHaveLength(2);
    expect(announced).toBe(1);
  });

  it("keeps the result of the refresh started last when two overlap", async () => {
    let folders = [folder("file:///src/app")];
    const index = new ProjectIndex(server(), () => folders);
    const first = index.refresh();
    folders = [folder("file:///src/lib")];
    const second = index.refresh();
    await Promise.all([second, first]);
    expect(index.projects.map((p) => p.projectRoot)).toEqual(["/src/lib"]);
  });
});
