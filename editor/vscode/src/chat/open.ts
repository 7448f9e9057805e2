/**
 * What the chat's links open: a fact of the "memory used" line through the Facts view's Recall
 * command, a memory file as a `lecode-memory:` document, a web link in the browser.
 */
import * as api from "../common/vscodeapi";
import type { FactRef } from "../facts/commands";
import { memoryUri } from "../notes/uri";
import type { ChatDeps } from "./controller";

/** The openers of ChatDeps; `firstFolder` stands in while no project is known. */
export function chatOpeners(firstFolder: () => string | undefined): Pick<ChatDeps, "openFact" | "openNote" | "openExternal"> {
  return {
    async openFact(factId, revision, folderUri) {
      const folder = folderUri ?? firstFolder();
      if (folder === undefined) {
        throw new Error("Open a folder to recall its facts.");
      }
      // The node the Facts view would pass; Recall asks the server for the fact as it is now.
      const node: FactRef = { kind: "fact", folderUri: folder, fact: { factId, revision, status: "valid" } };
      await api.executeCommand("lecode.recallFact", node);
    },
    async openNote(file, folderUri) {
      await api.openDocument(memoryUri(file, folderUri ?? firstFolder()));
    },
    async openExternal(url) {
      await api.openExternal(url);
    },
  };
}
