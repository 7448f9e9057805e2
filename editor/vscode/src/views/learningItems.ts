/**
 * The automatic-learning part of the Facts tree: a "Learning: <status>" node per project (the
 * `learning` of `lecode/facts/list`) with the proposals left for review as its children.
 *
 * A proposal's text is the model's wording, checked against the transcript by the server but
 * still untrusted: it is only shown, as a plain label and a plain-text tooltip (never Markdown).
 * The diagnostics are reason codes and counts: the server keeps no rejected text.
 */
import * as vscode from "vscode";
import type { LearningModel, ProposalModel } from "../common/protocol";
import { seqsPhrase } from "../sessions/transcript";
import type { FactNode, FactNodeOf } from "./nodes";

const STATUS: Record<LearningModel["status"], string> = {
  no_candidates: "the model proposed nothing",
  rejected: "no candidate passed the evidence checks",
  learned: "facts were remembered",
  proposed: "candidates were left for review",
  failed: "the extraction call failed or its answer was unusable",
  stale: "memory changed while it ran, so its candidates were discarded",
};

/** `exact_text_mismatch 2, temporary_preference 1`: the reason codes and their counts, by code. */
export function reasonCountsPhrase(counts: LearningModel["reasonCounts"]): string {
  return Object.entries(counts)
    .filter((entry): entry is [string, number] => typeof entry[1] === "number" && entry[1] > 0)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([code, count]) => `${code} ${count}`)
    .join(", ");
}

/** `#3` or `#3, #5`: the facts a proposal conflicts with. */
export function conflictsPhrase(proposal: ProposalModel): string {
  return proposal.conflicts.map((conflict) => `#${conflict.factId}`).join(", ");
}

/** A proposal's text on one line. */
export function proposalLabel(proposal: ProposalModel): string {
  return proposal.text.replace(/\s+/g, " ").trim();
}

export function proposalNodes(node: FactNodeOf<"learning">): FactNode[] {
  return node.learning.proposals.map((proposal) => ({ kind: "proposal", learning: node.learning, proposal, folderUri: node.folderUri }));
}

function learningIcon(status: LearningModel["status"]): vscode.ThemeIcon {
  switch (status) {
    case "failed":
    case "stale":
      return new vscode.ThemeIcon("warning", new vscode.ThemeColor("list.warningForeground"));
    case "proposed":
      return new vscode.ThemeIcon("lightbulb");
    default:
      return new vscode.ThemeIcon("sparkle");
  }
}

export function learningTreeItem(node: FactNodeOf<"learning">): vscode.TreeItem {
  const { learning } = node;
  const proposals = learning.proposals.length;
  const item = new vscode.TreeItem(
    `Learning: ${learning.status}`,
    proposals > 0 ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.None,
  );
  const reasons = reasonCountsPhrase(learning.reasonCounts);
  const learned = learning.learned.map((fact) => `#${fact.factId}`).join(", ");
  item.description = [reasons, learned === "" ? "" : `learned ${learned}`].filter((part) => part !== "").join(" · ");
  const lines = [
    `The latest automatic learning, after a compaction of session ${learning.sessionId} (its event is seq ${learning.seq}): ` +
      `${STATUS[learning.status] ?? learning.status}.`,
  ];
  if (learned !== "") {
    lines.push(`Remembered: ${learning.learned.map((fact) => `fact #${fact.factId} (revision ${fact.revision})`).join(", ")}.`);
  }
  if (reasons !== "") {
    lines.push(`Candidates (or answers) that failed a check, counted by the first check they failed: ${reasons}.`);
  }
  lines.push("The diagnostics are these codes and counts only: no rejected text, quote or model output is kept.");
  if (proposals > 0) {
    lines.push(`${proposals === 1 ? "1 proposal waits" : `${proposals} proposals wait`} for review: accept or dismiss each.`);
  }
  const omitted = learning.omittedProposals ?? 0;
  if (omitted > 0) {
    lines.push(`${omitted} more ${omitted === 1 ? "proposal is" : "proposals are"} not listed (the listing is capped): accept or dismiss these to see ${omitted === 1 ? "it" : "them"}.`);
  }
  item.tooltip = lines.join("\n");
  item.iconPath = learningIcon(learning.status);
  item.contextValue = "lecode.learning";
  return item;
}

export function proposalTreeItem(node: FactNodeOf<"proposal">): vscode.TreeItem {
  const { proposal } = node;
  // A plain string label and tooltip: VS Code renders neither as Markdown.
  const item = new vscode.TreeItem(proposalLabel(proposal), vscode.TreeItemCollapsibleState.None);
  const conflicts = conflictsPhrase(proposal);
  item.description = conflicts === "" ? proposal.kind : `${proposal.kind} · conflicts ${conflicts}`;
  const lines = [
    "Proposed fact (the model's wording, checked against the transcript; untrusted data, not instructions):",
    "",
    proposal.text,
    "",
    `Kind: ${proposal.kind}`,
    `Why a proposal: ${proposal.why}`,
    `Evidence: session ${proposal.source.sessionId}, ${seqsPhrase(proposal.source.seqs)}`,
  ];
  if (conflicts !== "") {
    const facts = proposal.conflicts.map((conflict) => `fact #${conflict.factId} (revision ${conflict.revision})`).join(", ");
    lines.push(`Conflicts with ${facts}: accepting corrects ${proposal.conflicts.length === 1 ? "it" : "the one you choose"}.`);
  }
  item.tooltip = lines.join("\n");
  item.iconPath = new vscode.ThemeIcon("lightbulb");
  item.command = { command: "lecode.recallProposalSource", title: "Recall Source", arguments: [node] };
  item.contextValue = "lecode.proposal";
  return item;
}
