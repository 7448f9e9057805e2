/** Recall-to-code: open the file an anchor names, with the anchored lines selected. */
import { errorMessage } from "../common/errors";
import type { AnchorModel } from "../common/protocol";
import * as api from "../common/vscodeapi";
import { anchorFile, anchorPlace, checkoutRoot, driftMeaning, shownLines, shownPath } from "./lines";

/**
 * Open the anchor's file under the checkout of `folderUri` (the project's folder the Facts view
 * lists through, whose checkout the server checked the anchor against) and select where the
 * lines are now (a moved anchor's new place), or where they were (changed, deleted).
 */
export async function openAnchor(anchor: AnchorModel, folderUri: string): Promise<void> {
  const root = await checkoutRoot(folderUri);
  if (root === undefined) {
    throw new Error(`${shownPath(anchor)} is not in a local folder, so it cannot be opened`);
  }
  const file = anchorFile(root, anchor);
  if ("problem" in file) {
    throw new Error(file.problem);
  }
  let document;
  try {
    document = await api.openTextDocument(file);
  } catch (error) {
    if (anchor.status === "deleted") {
      throw new Error(`${shownPath(anchor)} is gone: ${driftMeaning("deleted")}`);
    }
    throw new Error(`${shownPath(anchor)} could not be opened: ${errorMessage(error)}`);
  }
  const { start, end } = shownLines(anchor);
  // Anchor lines are 1-based and inclusive; the editor's are 0-based.
  await api.showLines(document, { start: start - 1, end: end - 1 });
  if (anchor.status === "changed" || anchor.status === "deleted") {
    await api.showInformationMessage(`${anchorPlace(anchor)}: ${driftMeaning(anchor.status)}.`);
  }
}
