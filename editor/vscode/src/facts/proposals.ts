/**
 * The commands on the proposals of automatic learning (children of the "Learning" node of the
 * Facts tree): Accept Proposal, Dismiss Proposal and Recall Source.
 *
 * Accepting asks first, in a modal dialog that shows the text (and, for a proposal that conflicts
 * with facts, which fact at which revision is corrected), then stores it:
 * `lecode/facts/acceptProposal` (remembered with its recorded source and dismissed, in one step),
 * or `lecode/facts/correct` of the conflicting fact against the revision the proposal was made
 * against, then `lecode/facts/dismissProposal`. The server checks the
 * evidence again; a refusal is shown as its sentence and the tree is redrawn (the proposal may no
 * longer validate). Nothing here writes without the person's confirmation.
 */
import { errorMessage, serverErrorCode } from "../common/errors";
import type { LearnedFactModel, ProposalModel } from "../common/protocol";
import { Requests } from "../common/protocol";
import { request } from "../common/requests";
import * as api from "../common/vscodeapi";
import { guarded } from "../notes/commands";
import type { FactNode, FactNodeOf } from "../views/nodes";
import { type FactDeps, openEvidence } from "./commands";
import { seqsPhrase } from "../sessions/transcript";

export type ProposalNode = FactNodeOf<"proposal">;

export const ACCEPT = "Accept";

function asProposal(value: unknown): ProposalNode {
  if (typeof value === "object" && value !== null && (value as FactNode).kind === "proposal") {
    return value as ProposalNode;
  }
  throw new Error('Run this command on a proposal under "Learning" in the "Facts" view.');
}

function evidencePhrase(proposal: ProposalModel): string {
  return `session ${proposal.source.sessionId}, ${seqsPhrase(proposal.source.seqs)}`;
}

/**
 * The modal question before accepting: the text, its evidence, and for a conflict the fact and
 * revision that are corrected. `current` is the conflicting fact's text now, when known.
 */
export function acceptConfirmation(
  proposal: ProposalModel,
  conflict?: LearnedFactModel,
  current?: string,
): { message: string; detail: string } {
  const checked = "The server checks the evidence again before storing anything.";
  if (conflict === undefined) {
    return {
      message: "Remember this proposed fact?",
      detail: [proposal.text, "", `Kind: ${proposal.kind}. Evidence: ${evidencePhrase(proposal)}.`, checked].join("\n"),
    };
  }
  const { factId, revision } = conflict;
  const lines = [`Fact #${factId} revision ${revision} will be corrected to:`, "", proposal.text, ""];
  if (current !== undefined) {
    lines.push(`It says now: ${current}`, "");
  }
  lines.push(`Kind: ${proposal.kind}. Evidence: ${evidencePhrase(proposal)}.`);
  const others = proposal.conflicts.filter((other) => other.factId !== factId).map((other) => `#${other.factId}`);
  if (others.length > 0) {
    lines.push(`The other conflicting facts stay as they are: ${others.join(", ")}.`);
  }
  lines.push(checked);
  return { message: `Correct fact #${factId} (revision ${revision}) with this proposal?`, detail: lines.join("\n") };
}

/** The fact a conflicting proposal corrects: its only conflict, or the one the person picks. */
async function chooseConflict(proposal: ProposalModel): Promise<LearnedFactModel | undefined | "cancelled"> {
  if (proposal.conflicts.length <= 1) {
    return proposal.conflicts[0];
  }
  const picked = await api.showQuickPick(
    proposal.conflicts.map((conflict) => ({ label: `Fact #${conflict.factId}`, description: `revision ${conflict.revision}`, conflict })),
    { placeHolder: "The proposal conflicts with several facts: which one does it correct?" },
  );
  return picked === undefined ? "cancelled" : picked.conflict;
}

/** The conflicting fact's text now, for the question; undefined when it cannot be recalled. */
async function currentText(deps: FactDeps, folderUri: string, factId: number): Promise<string | undefined> {
  try {
    const now = await request(deps.sender, Requests.factsRecall, { workspaceUri: folderUri, factId, limit: 1 });
    return now.text ?? undefined;
  } catch {
    return undefined; // the correction itself reports what is wrong with the fact
  }
}

/** Refused by the server: redraw (the proposal may be gone) and say why in its words. */
function refused(deps: FactDeps, what: string, error: unknown): Error {
  if (serverErrorCode(error) !== undefined) {
    deps.refresh();
  }
  return new Error(`The proposal was not ${what}: ${errorMessage(error)}`);
}

export async function acceptProposal(deps: FactDeps, node: ProposalNode): Promise<void> {
  const { learning, proposal, folderUri } = node;
  const conflict = await chooseConflict(proposal);
  if (conflict === "cancelled") {
    return;
  }
  const current = conflict === undefined ? undefined : await currentText(deps, folderUri, conflict.factId);
  const { message, detail } = acceptConfirmation(proposal, conflict, current);
  if ((await api.showWarningMessage(message, { modal: true, detail }, ACCEPT)) !== ACCEPT) {
    return;
  }
  const target = { workspaceUri: folderUri, sessionId: learning.sessionId, seq: learning.seq, index: proposal.index };
  if (conflict === undefined) {
    // One step (issue 41): the server remembers the text with its recorded source and dismisses
    // the proposal in the same request.
    let accepted;
    try {
      accepted = await request(deps.sender, Requests.factsAcceptProposal, target);
    } catch (error) {
      throw refused(deps, "accepted", error);
    }
    deps.refresh();
    await api.showInformationMessage(
      `Remembered fact #${accepted.factId} from the proposal, with ${evidencePhrase(proposal)} as its evidence.`,
    );
    return;
  }
  let result;
  try {
    result = await request(deps.sender, Requests.factsCorrect, {
      workspaceUri: folderUri,
      factId: conflict.factId,
      expectedRevision: conflict.revision,
      text: proposal.text,
      source: proposal.source,
    });
  } catch (error) {
    throw refused(deps, "accepted", error);
  }
  // A correcting proposal is done with: it is dismissed so that it is not offered again (the
  // server lists a proposal as long as its evidence validates, accepted or not).
  let stillListed = "";
  try {
    await request(deps.sender, Requests.factsDismissProposal, target);
  } catch (error) {
    stillListed = ` The proposal is still listed: ${errorMessage(error)}`;
  }
  deps.refresh();
  await api.showInformationMessage(
    `Fact #${result.factId} is now at revision ${result.revision}, corrected by the proposal.${stillListed}`,
  );
}

export async function dismissProposal(deps: FactDeps, node: ProposalNode): Promise<void> {
  const { learning, proposal, folderUri } = node;
  try {
    await request(deps.sender, Requests.factsDismissProposal, {
      workspaceUri: folderUri,
      sessionId: learning.sessionId,
      seq: learning.seq,
      index: proposal.index,
    });
  } catch (error) {
    throw refused(deps, "dismissed", error);
  }
  deps.refresh();
}

/** Open the transcript records the proposal cites, selected. */
export async function recallProposalSource(deps: FactDeps, node: ProposalNode): Promise<void> {
  await openEvidence(deps, undefined, node.proposal.source, node.folderUri);
}

/** The proposal commands, by id; extension.ts registers them. */
export function proposalCommands(deps: FactDeps): Record<string, (arg?: unknown) => Promise<void>> {
  const on = (body: (deps: FactDeps, node: ProposalNode) => Promise<void>) =>
    guarded(async (arg?: unknown) => body(deps, asProposal(arg)));
  return {
    "lecode.acceptProposal": on(acceptProposal),
    "lecode.dismissProposal": on(dismissProposal),
    "lecode.recallProposalSource": on(recallProposalSource),
  };
}
