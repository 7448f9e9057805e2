/**
 * The team-memory part of the Facts tree, per project: a "Team" node (shown only when the
 * checkout has shared facts, files under `.lecode/facts/`) whose children are the facts of
 * `lecode/facts/team`, every page up to a cap, each with its status: valid (chat's memory shows it
 * as team evidence), unverified (never shown to the model; the reason says why) or hidden (you
 * forgot it here). A click opens a valid or hidden fact's recall (a `lecode-team:` document) and
 * an unverified fact's file.
 *
 * Everything in a shared file (its text, who shared it) was written by someone else: it is only
 * shown, as a plain label and a plain-text tooltip.
 */
import * as vscode from "vscode";
import { anchorPlace, driftMeaning, worstDrift } from "../anchors/lines";
import { errorMessage, serverErrorCode } from "../common/errors";
import type { TeamFactEntry, TeamListResult } from "../common/protocol";
import { Requests } from "../common/protocol";
import { type RequestSender, request } from "../common/requests";
import type { FactNode, FactNodeOf, TeamListing, TeamPage } from "./nodes";

/** Shared facts the Team node lists at most (the server answers 20 a page). */
export const TEAM_CAP = 500;

/** JSON-RPC's "method not found": a lecode-ls older than team memory. */
const METHOD_NOT_FOUND = -32601;

/** Up to `cap` shared facts of the checkout of `folderUri`, following `nextOffset` page by page. */
export async function listTeam(sender: RequestSender, folderUri: string, cap = TEAM_CAP): Promise<TeamPage> {
  const facts: TeamFactEntry[] = [];
  let offset = 0;
  let first: TeamListResult | undefined;
  for (;;) {
    const page = await request(sender, Requests.factsTeam, { workspaceUri: folderUri, offset });
    first ??= page;
    facts.push(...page.facts);
    const done = (more: boolean): TeamPage => ({
      facts: facts.slice(0, cap),
      more,
      total: first?.total ?? facts.length,
      skipped: first?.skipped ?? {},
      pending: first?.pending ?? 0,
    });
    const next = page.nextOffset;
    if (next === null || next === undefined) {
      return done(facts.length > cap);
    }
    if (facts.length >= cap) {
      return done(true);
    }
    if (next <= offset) {
      throw new Error("lecode-ls answered a page of shared facts that does not advance; refresh the Facts view");
    }
    offset = next;
  }
}

/**
 * The team listing of a project, for its Team node: undefined (no node) outside a Git checkout or
 * with a server that has no team memory; the server's sentence when the listing failed otherwise.
 */
export async function loadTeam(sender: RequestSender, folderUri: string): Promise<TeamListing | undefined> {
  try {
    return await listTeam(sender, folderUri);
  } catch (error) {
    const code = (error as { code?: unknown } | null)?.code;
    if (serverErrorCode(error) === "not_a_checkout" || code === METHOD_NOT_FOUND) {
      return undefined;
    }
    return { problem: errorMessage(error) };
  }
}

const skippedCount = (page: TeamPage): number =>
  Object.values(page.skipped).reduce<number>((sum, count) => sum + (typeof count === "number" ? count : 0), 0);

/** The Team node of a project, when it has anything to show. */
export function teamNode(folderUri: string, team: TeamListing | undefined): FactNode[] {
  if (team === undefined) {
    return [];
  }
  if ("facts" in team && team.facts.length === 0 && team.pending === 0 && skippedCount(team) === 0) {
    return []; // nothing is shared in this checkout
  }
  return [{ kind: "team", team, folderUri }];
}

export function teamChildren(node: FactNodeOf<"team">): FactNode[] {
  const { team, folderUri } = node;
  if ("problem" in team) {
    return [];
  }
  const nodes = team.facts.map((entry): FactNode => ({ kind: "teamFact", entry, folderUri }));
  if (team.more) {
    nodes.push({ kind: "message", text: `The first ${team.facts.length} of ${team.total} shared facts are shown.`, folderUri });
  }
  if (team.facts.length === 0) {
    nodes.push({ kind: "message", text: "No shared fact could be listed yet.", folderUri });
  }
  return nodes;
}

const plural = (count: number, one: string, many = `${one}s`): string => `${count} ${count === 1 ? one : many}`;

/** `3 shared · 1 unverified · 2 still loading`. */
export function teamSummary(team: TeamPage): string {
  const parts = [`${team.more ? team.total : team.facts.length} shared`];
  const unverified = team.facts.filter((entry) => entry.status === "unverified").length;
  const hidden = team.facts.filter((entry) => entry.status === "hidden").length;
  if (unverified > 0) {
    parts.push(`${unverified} unverified`);
  }
  if (hidden > 0) {
    parts.push(`${hidden} forgotten by you`);
  }
  if (team.pending > 0) {
    parts.push(`${team.pending} still loading`);
  }
  const skipped = skippedCount(team);
  if (skipped > 0) {
    parts.push(`${skipped} skipped`);
  }
  return parts.join(" · ");
}

export function teamTreeItem(node: FactNodeOf<"team">): vscode.TreeItem {
  const { team } = node;
  const item = new vscode.TreeItem("Team", vscode.TreeItemCollapsibleState.Collapsed);
  item.contextValue = "lecode.team";
  if ("problem" in team) {
    item.description = "not available";
    item.tooltip = `lecode/facts/team answered: ${team.problem}`;
    item.iconPath = new vscode.ThemeIcon("warning", new vscode.ThemeColor("list.warningForeground"));
    item.collapsibleState = vscode.TreeItemCollapsibleState.None;
    return item;
  }
  item.description = teamSummary(team);
  const lines = [
    "Facts shared with the team: files under .lecode/facts/ in this checkout, committed like code.",
    "Valid ones are shown to chat's model as team evidence; unverified ones never are.",
  ];
  const skipped = Object.entries(team.skipped).filter((entry): entry is [string, number] => typeof entry[1] === "number" && entry[1] > 0);
  if (skipped.length > 0) {
    lines.push(`Not read: ${skipped.map(([why, count]) => `${count} (${why})`).join(", ")}.`);
  }
  if (team.pending > 0) {
    lines.push(`${plural(team.pending, "changed file")} not read yet: the next refresh goes on.`);
  }
  item.tooltip = lines.join("\n");
  item.iconPath = new vscode.ThemeIcon("organization");
  return item;
}

/** A shared fact's label: its text on one line, or its file's name when the server sent none. */
export function teamFactLabel(entry: TeamFactEntry): string {
  const text = entry.text?.replace(/\s+/g, " ").trim();
  return text ? text : (entry.file.split("/").pop() ?? entry.file);
}

const MEANING: Record<TeamFactEntry["status"], string> = {
  valid: "its bundled evidence verifies; chat's memory shows it as team evidence",
  unverified: "it is never shown to the model",
  hidden: "you forgot it here: its evidence is excluded for you, the file stays for the team",
};

const ICONS: Record<TeamFactEntry["status"], { id: string; color?: string }> = {
  valid: { id: "pass", color: "testing.iconPassed" },
  unverified: { id: "warning", color: "list.warningForeground" },
  hidden: { id: "eye-closed" },
};

const CLICK: Record<TeamFactEntry["status"], string> = {
  valid: "Click to recall it with its evidence.",
  unverified: "Click to open its file.",
  hidden: "Click to recall it (its evidence is not shown: you forgot it).",
};

/** What the bundle shows of a shared fact's text (TeamFactEntry.support). */
export const SUPPORT: Record<NonNullable<TeamFactEntry["support"]>, { short: string; long: string }> = {
  quote: { short: "verified quote", long: "Verified: the text is an exact quote of a cited user message." },
  read: { short: "verified read", long: "Verified: a file read in the evidence showed that line." },
  claim: { short: "sharer's claim", long: "The sharer's claim: the evidence does not contain this text; read it before relying on it." },
};

/** `valid · Ada · verified quote · also yours (#4)`. */
export function teamFactDescription(entry: TeamFactEntry): string {
  const parts: string[] = [entry.status];
  const by = entry.sharedBy?.replace(/\s+/g, " ").trim();
  if (by) {
    parts.push(by);
  }
  if (entry.support) {
    parts.push(SUPPORT[entry.support].short);
  }
  if (entry.localFactId !== undefined && entry.localFactId !== null) {
    parts.push(`also yours (#${entry.localFactId})`);
  }
  const worst = worstDrift(entry.anchors); // as an own fact's description says it (driftSuffix)
  if (worst !== undefined) {
    parts.push(worst);
  }
  return parts.join(" · ");
}

export function teamFactTreeItem(node: FactNodeOf<"teamFact">): vscode.TreeItem {
  const { entry } = node;
  const item = new vscode.TreeItem(teamFactLabel(entry), vscode.TreeItemCollapsibleState.None);
  item.description = teamFactDescription(entry);
  const icon = ICONS[entry.status] ?? { id: "circle-outline" };
  item.iconPath = icon.color === undefined ? new vscode.ThemeIcon(icon.id) : new vscode.ThemeIcon(icon.id, new vscode.ThemeColor(icon.color));
  const by = entry.sharedBy ? ` by ${entry.sharedBy}` : "";
  const at = entry.sharedAt ? ` on ${entry.sharedAt}` : "";
  const lines = [`Shared${by}${at} in ${entry.file}: ${entry.status} (${MEANING[entry.status] ?? "an unknown status"})`];
  if (entry.reason) {
    lines.push(`Why: ${entry.reason}`);
  }
  if (entry.text) {
    lines.push("", entry.text + (entry.factTextTruncated ? " …(cut at 512 characters)" : ""), "", "Untrusted data, not instructions.");
  }
  if (entry.support) {
    lines.push(SUPPORT[entry.support].long);
  }
  if (entry.localFactId !== undefined && entry.localFactId !== null) {
    lines.push(`Also your own fact #${entry.localFactId}: one fact, not two.`);
  }
  lines.push(...(entry.anchors ?? []).map((anchor) => `Anchored at ${anchorPlace(anchor)}: ${anchor.status} (${driftMeaning(anchor.status)})`));
  lines.push("", CLICK[entry.status] ?? "Click to recall it.");
  item.tooltip = lines.join("\n");
  item.command = { command: "lecode.openTeamFact", title: "Open Shared Fact", arguments: [node] };
  // By status: Stop Sharing is offered on every shared fact, Forget for Me on those not hidden (package.json).
  item.contextValue = `lecode.teamFact.${entry.status}`;
  return item;
}
