/**
 * lecode: Delete Session…: pick a session of the project, confirm in a modal that says how many
 * facts cite it (they become `missing`: their evidence is gone), then `lecode/session/delete`.
 *
 * The server refuses while a turn or a compaction runs in the session, or while another window
 * has it attached; that refusal is shown as the server's sentence.
 */
import type { SessionInfoModel } from "../common/protocol";
import { Requests } from "../common/protocol";
import { request } from "../common/requests";
import { confirmDestructive } from "../common/confirm";
import * as api from "../common/vscodeapi";
import { type FactDeps, sessionPicks } from "../facts/commands";
import { CANCELLED, chooseFolder, guarded } from "../notes/commands";
import { workspaceParams } from "../notes/uri";

export const DELETE = "Delete";

function sessionName(session: SessionInfoModel): string {
  return session.title.trim() === "" ? session.sessionId : `"${session.title}" (${session.sessionId})`;
}

/** The modal question before a deletion: what goes for good, and which facts lose evidence. */
export function deleteConfirmation(session: SessionInfoModel): string {
  const records = session.records - 1;
  const question = `Delete session ${sessionName(session)}? Its transcript (${records} record${records === 1 ? "" : "s"}) is deleted for good.`;
  const count = session.citingFacts ?? 0;
  if (count === 0) {
    return `${question} No fact cites it.`;
  }
  const facts = count === 1 ? "1 fact cites it: it becomes" : `${count} facts cite it: they become`;
  return `${question} ${facts} missing (kept, but without evidence).`;
}

export async function deleteSession(deps: FactDeps): Promise<void> {
  const folder = await chooseFolder(deps);
  if (folder === CANCELLED) {
    return;
  }
  const { sessions } = await request(deps.sender, Requests.sessionList, workspaceParams(folder));
  if (sessions.length === 0) {
    throw new Error("This project has no sessions.");
  }
  const picks = sessionPicks(sessions).map((pick) => {
    const count = pick.session.citingFacts ?? 0;
    const cited = count === 0 ? undefined : `cited by ${count} fact${count === 1 ? "" : "s"}`;
    return { ...pick, description: [pick.description, cited].filter(Boolean).join(" · ") };
  });
  const picked = await api.showQuickPick(picks, { placeHolder: "Which session do you want to delete?", matchOnDescription: true });
  if (picked === undefined) {
    return;
  }
  await confirmAndDelete(deps, folder, picked.session);
}

/**
 * Delete `session` after the modal confirmation (confirm.ts): from the palette's command or the
 * chat's session picker. Whether it was deleted.
 */
export async function confirmAndDelete(deps: FactDeps, folder: string | undefined, session: SessionInfoModel): Promise<boolean> {
  if (!(await confirmDestructive(deleteConfirmation(session), "Facts are never deleted with a session.", DELETE))) {
    return false;
  }
  const result = await request(deps.sender, Requests.sessionDelete, {
    ...workspaceParams(folder),
    sessionId: session.sessionId,
  });
  deps.refresh();
  const missing = result.citingFacts === 0 ? "" : ` ${result.citingFacts} fact${result.citingFacts === 1 ? " is" : "s are"} missing now.`;
  await api.showInformationMessage(`Deleted session ${session.sessionId}.${missing}`);
  return true;
}

/** The session commands, by id; extension.ts registers them. */
export function sessionCommands(deps: FactDeps): Record<string, (arg?: unknown) => Promise<void>> {
  return { "lecode.deleteSession": guarded(() => deleteSession(deps)) };
}
