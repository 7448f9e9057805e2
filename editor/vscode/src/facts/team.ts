/**
 * The team-memory commands: Share with Team on a valid fact of yours, Stop Sharing on a fact of
 * yours that is shared or on a fact under "Team", Forget for Me on a fact under "Team", and the
 * click on a shared fact (its recall, or an unverified fact's file). Forgetting a fact of yours
 * that is shared offers Stop Sharing Too afterwards (see commands.ts).
 *
 * Sharing writes a file into the repository (`.lecode/facts/<teamId>.json`) and unsharing removes
 * it: the server never commits, so each says which file to commit. Stop Sharing asks first (the
 * file goes for everyone once the removal is committed); Forget for Me asks first too (the fact's
 * evidence is excluded in your own memory for good, the file stays for the team). Each redraws
 * the Facts view; a refusal is shown as the server's sentence.
 */
import * as vscode from "vscode";
import { confirmDestructive } from "../common/confirm";
import { serverErrorCode } from "../common/errors";
import type { SharedModel, TeamFactEntry } from "../common/protocol";
import { Requests } from "../common/protocol";
import { type RequestSender, request } from "../common/requests";
import * as api from "../common/vscodeapi";
import { guarded } from "../notes/commands";
import type { FactNode, FactNodeOf } from "../views/nodes";
import { teamFactLabel } from "../views/teamItems";
import { teamUri } from "./teamDocument";

/** What the team commands need: the server, and a redraw of the Facts view (FactDeps has both). */
export interface TeamDeps {
  sender: RequestSender;
  refresh(): void;
}

type FactItem = FactNodeOf<"fact">;
type TeamFactItem = FactNodeOf<"teamFact">;

export const OPEN_FILE = "Open File";
export const STOP_SHARING = "Stop Sharing";
export const STOP_SHARING_TOO = "Stop Sharing Too";
export const FORGET_FOR_ME = "Forget for Me";

/** A `file:` URI the server sent, or a sentence: nothing else is opened as a shared file. */
function fileUri(uri: string): vscode.Uri {
  const parsed = vscode.Uri.parse(uri);
  if (parsed.scheme !== "file") {
    throw new Error(`${uri} is not a local file, so it cannot be opened`);
  }
  return parsed;
}

// -- share -----------------------------------------------------------------------------------

/** Share a valid fact of yours: the server writes its file; the person commits it. */
export async function shareFact(deps: TeamDeps, node: FactItem): Promise<void> {
  const { fact, folderUri } = node;
  const result = await request(deps.sender, Requests.factsShare, { workspaceUri: folderUri, factId: fact.factId });
  deps.refresh();
  const said = result.created ? `Shared as ${result.file}` : `Shared again: ${result.file} is rewritten`;
  if ((await api.showInformationMessage(`${said}: commit it with your change.`, OPEN_FILE)) === OPEN_FILE) {
    await api.openDocument(fileUri(result.uri));
  }
}

// -- stop sharing ----------------------------------------------------------------------------

/** The modal question before a Stop Sharing: what is removed, and for whom. */
export function stopSharingConfirmation(label: string, file: string, yours: boolean): { message: string; detail: string } {
  const stays = yours ? " Your own fact stays." : "";
  return {
    message: `Stop sharing "${label}"?`,
    detail:
      `${file} is removed from this checkout. Once you commit the removal, the fact is gone for everyone on the team ` +
      `(until then, Share with Team or Git can bring the file back).${stays}`,
  };
}

/** Remove a shared fact's file, after the modal question; by teamId or by your own fact's ID. */
async function stopSharing(deps: TeamDeps, folderUri: string, label: string, file: string, target: { teamId: string } | { factId: number }, yours: boolean): Promise<void> {
  const { message, detail } = stopSharingConfirmation(label, file, yours);
  if ((await api.showWarningMessage(message, { modal: true, detail }, STOP_SHARING)) !== STOP_SHARING) {
    return;
  }
  const result = await request(deps.sender, Requests.factsUnshare, { workspaceUri: folderUri, ...target });
  deps.refresh();
  await api.showInformationMessage(`Stopped sharing: ${result.file} is removed; commit its removal.`);
}

/** Stop Sharing on a fact of yours (by its ID) or on a fact under "Team" (by its teamId). */
export function stopSharingNode(deps: TeamDeps, node: FactItem | TeamFactItem): Promise<void> {
  if (node.kind === "teamFact") {
    const { entry } = node;
    const yours = entry.localFactId !== undefined && entry.localFactId !== null;
    return stopSharing(deps, node.folderUri, teamFactLabel(entry), entry.file, { teamId: entry.teamId }, yours);
  }
  const { fact } = node;
  if (!fact.shared) {
    throw new Error(`Fact #${fact.factId} is not shared with the team.`);
  }
  const label = fact.text?.replace(/\s+/g, " ").trim() || `fact #${fact.factId}`;
  return stopSharing(deps, node.folderUri, label, fact.shared.file, { factId: fact.factId }, true);
}

/**
 * After a fact of yours that is shared was forgotten: `message` with a Stop Sharing Too button,
 * which removes its file (the forget was confirmed already; the file is the team's copy of it).
 */
export async function offerStopSharing(deps: TeamDeps, folderUri: string, shared: SharedModel, message: string): Promise<void> {
  const asked = `${message} It is still shared in ${shared.file}: Stop Sharing Too removes the file for everyone once you commit the removal.`;
  if ((await api.showInformationMessage(asked, STOP_SHARING_TOO)) !== STOP_SHARING_TOO) {
    return;
  }
  const result = await request(deps.sender, Requests.factsUnshare, { workspaceUri: folderUri, teamId: shared.teamId });
  deps.refresh();
  await api.showInformationMessage(`Stopped sharing: ${result.file} is removed; commit its removal.`);
}

// -- forget for me ---------------------------------------------------------------------------

/** The modal question before Forget for Me. */
export function forgetForMeConfirmation(entry: TeamFactEntry): { question: string; consequences: string } {
  return {
    question: `Forget "${teamFactLabel(entry)}" for you?`,
    consequences:
      "Its bundled evidence is excluded in your own memory for good: it is hidden for you, never shown to your chat's model, " +
      `and never learned again here. ${entry.file} stays for the team; Stop Sharing removes it for everyone.`,
  };
}

/** Exclude a shared fact's evidence for this person only, after the modal question. */
export async function forgetForMe(deps: TeamDeps, node: TeamFactItem): Promise<void> {
  const { entry, folderUri } = node;
  const { question, consequences } = forgetForMeConfirmation(entry);
  if (!(await confirmDestructive(question, consequences, FORGET_FOR_ME))) {
    return;
  }
  const result = await request(deps.sender, Requests.factsTeamForget, { workspaceUri: folderUri, teamId: entry.teamId });
  deps.refresh();
  await api.showInformationMessage(
    result.forgotten
      ? `Forgotten for you: ${result.file} stays for the team.`
      : `It had already been forgotten for you; ${result.file} stays for the team.`,
  );
}

// -- open ------------------------------------------------------------------------------------

/** A click on a shared fact: its recall with its evidence, or an unverified fact's file. */
export async function openTeamFact(node: TeamFactItem): Promise<void> {
  const { entry, folderUri } = node;
  if (entry.status === "unverified") {
    await api.openDocument(fileUri(entry.uri));
    return;
  }
  const document = await api.openTextDocument(teamUri({ teamId: entry.teamId, workspaceUri: folderUri }));
  await api.showLines(document);
}

// -- registration ----------------------------------------------------------------------------

function asNode<K extends FactNode["kind"]>(kinds: readonly K[], where: string): (value: unknown) => FactNodeOf<K> {
  return (value) => {
    if (typeof value === "object" && value !== null && (kinds as readonly string[]).includes((value as FactNode).kind)) {
      return value as FactNodeOf<K>;
    }
    throw new Error(`Run this command on ${where} in the "Facts" view.`);
  };
}

/** A command on a node; a refusal from the server also redraws the tree (something changed). */
function on<N>(deps: TeamDeps, parse: (value: unknown) => N, body: (node: N) => Promise<void>) {
  return guarded(async (arg?: unknown) => {
    try {
      await body(parse(arg));
    } catch (error) {
      if (serverErrorCode(error) !== undefined) {
        deps.refresh();
      }
      throw error;
    }
  });
}

/** The team commands, by id; extension.ts registers them. */
export function teamCommands(deps: TeamDeps): Record<string, (arg?: unknown) => Promise<void>> {
  const fact = asNode(["fact"], "a fact");
  const shared = asNode(["fact", "teamFact"], 'a shared fact (yours, or one under "Team")');
  const teamFact = asNode(["teamFact"], 'a fact under "Team"');
  return {
    "lecode.shareFact": on(deps, fact, (node) => shareFact(deps, node)),
    "lecode.stopSharing": on(deps, shared, (node) => stopSharingNode(deps, node)),
    "lecode.forgetTeamFact": on(deps, teamFact, (node) => forgetForMe(deps, node)),
    "lecode.openTeamFact": on(deps, teamFact, openTeamFact),
  };
}
