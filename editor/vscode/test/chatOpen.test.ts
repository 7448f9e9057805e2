/**
 * What the chat's "memory used" line and links open: a fact through the Facts view's own Recall
 * command (the node it is given is one that command accepts), a memory file as a `lecode-memory:`
 * document, a web link in the browser.
 */
// covers P7 (chat panel: memory used links to recall)
import { describe, expect, it, vi } from "vitest";
import { chatOpeners } from "../src/chat/open";
import { Requests } from "../src/common/protocol";
import * as api from "../src/common/vscodeapi";
import { factCommands } from "../src/facts/commands";
import { memoryUri } from "../src/notes/uri";
import { FakeServer } from "./fakes";

vi.mock("../src/common/vscodeapi");

const APP = "file:///src/app";

describe("chatOpeners", () => {
  it("recall a fact with the Facts view's Recall command, in the chat's project", async () => {
    const server = new FakeServer().on(Requests.factsRecall, () => ({ factId: 12, revision: 3, status: "stale" }));
    const refresh = vi.fn();
    const commands = factCommands({
      sender: server,
      projects: { projects: [], projectOfFolder: () => undefined },
      transcripts: { linesOf: () => undefined, problemOf: () => undefined },
      refresh,
      showMore: () => undefined,
    });
    vi.mocked(api.executeCommand).mockImplementation(async (id, ...args) => commands[id]?.(...args));
    await chatOpeners(() => undefined).openFact(12, 2, APP);
    expect(vi.mocked(api.executeCommand).mock.calls[0][0]).toBe("lecode.recallFact");
    expect(server.calls).toEqual([{ method: Requests.factsRecall, params: { workspaceUri: APP, factId: 12, limit: 1 } }]);
    // The fact moved on since it was injected: the Facts view is redrawn and the person told.
    expect(refresh).toHaveBeenCalled();
    expect(vi.mocked(api.showErrorMessage)).not.toHaveBeenCalled();
    expect(vi.mocked(api.showInformationMessage).mock.calls[0][0]).toMatch(/^Fact #12 \(revision 3\): the source is stale/);
  });

  it("fall back to the first workspace folder, and say so when there is none", async () => {
    await chatOpeners(() => "file:///first").openFact(1, 1, undefined);
    expect(vi.mocked(api.executeCommand).mock.calls[0][1]).toMatchObject({ folderUri: "file:///first" });
    await expect(chatOpeners(() => undefined).openFact(1, 1, undefined)).rejects.toThrow("Open a folder to recall its facts.");
  });

  it("open a memory file of the project as a lecode-memory: document", async () => {
    await chatOpeners(() => undefined).openNote("scratchpad.md", APP);
    expect(vi.mocked(api.openDocument).mock.calls.map(([uri]) => uri.toString())).toEqual([memoryUri("scratchpad.md", APP).toString()]);
  });

  it("open a web link outside VS Code", async () => {
    await chatOpeners(() => undefined).openExternal("https://example.com/docs");
    expect(vi.mocked(api.openExternal).mock.calls).toEqual([["https://example.com/docs"]]);
  });
});
