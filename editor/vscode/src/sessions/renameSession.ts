/**
 * Rename a session from the chat's session picker: the title is asked for, prefilled with the
 * one it has, and kept by the server (`lecode/session/rename`; empty gives back its first title).
 */
import type { SessionInfoModel } from "../common/protocol";
import { Requests } from "../common/protocol";
import { type RequestSender, request } from "../common/requests";
import * as api from "../common/vscodeapi";
import { workspaceParams } from "../notes/uri";

/** The longest title the server keeps. */
export const MAX_TITLE = 200;

/** Whether the session was renamed. */
export async function renameSession(sender: RequestSender, folderUri: string | undefined, session: SessionInfoModel): Promise<boolean> {
  const title = await api.showInputBox({
    title: "Rename Session",
    prompt: `A new title for ${session.sessionId} (empty: the title it began with)`,
    value: session.title,
    validateInput: (text) => (text.length > MAX_TITLE ? `At most ${MAX_TITLE} characters (this is ${text.length})` : undefined),
  });
  if (title === undefined || title.length > MAX_TITLE) {
    return false;
  }
  await request(sender, Requests.sessionRename, { ...workspaceParams(folderUri), sessionId: session.sessionId, title: title.trim() });
  return true;
}
