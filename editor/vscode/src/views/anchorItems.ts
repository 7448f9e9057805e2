/**
 * Code anchors in the Facts tree: a fact's drift in its description and tooltip, and one child
 * per anchor (its file and lines, its status) that opens the file at the anchored lines.
 */
import * as vscode from "vscode";
import {
  type AnchorStatus,
  DRIFT_ICONS,
  anchorPlace,
  driftMeaning,
  drifted,
  shownLines,
  shownPath,
  worstDrift,
} from "../anchors/lines";
import type { AnchorModel, FactEntry } from "../common/protocol";

export type AnchorNode = { kind: "anchor"; fact: FactEntry; anchor: AnchorModel; folderUri: string };

export function driftIcon(status: AnchorStatus): vscode.ThemeIcon {
  const icon = DRIFT_ICONS[status] ?? { id: "circle-outline" };
  return icon.color === undefined ? new vscode.ThemeIcon(icon.id) : new vscode.ThemeIcon(icon.id, new vscode.ThemeColor(icon.color));
}

/** ` · changed`: a fact's worst drift, for its description; empty without anchors. */
export function driftSuffix(fact: FactEntry): string {
  const worst = worstDrift(fact.anchors);
  return worst === undefined ? "" : ` · ${worst}`;
}

/** The icon a drifted fact (an anchor changed or deleted) is drawn with instead of its status's. */
export function driftedIcon(fact: FactEntry): vscode.ThemeIcon | undefined {
  const worst = worstDrift(fact.anchors);
  return drifted(worst) && worst !== undefined ? driftIcon(worst) : undefined;
}

/** Tooltip lines: each anchor's place and status, in words. */
export function driftTooltip(fact: FactEntry): string[] {
  return (fact.anchors ?? []).map((anchor) => `Anchored at ${anchorPlace(anchor)}: ${anchor.status} (${driftMeaning(anchor.status)})`);
}

function captured(anchor: AnchorModel): string {
  const lines = anchor.startLine === anchor.endLine ? `line ${anchor.startLine}` : `lines ${anchor.startLine}-${anchor.endLine}`;
  const commit = anchor.commit ? ` at commit ${anchor.commit.slice(0, 12)}` : "";
  return `Remembered from ${anchor.path} ${lines}${commit} on ${anchor.capturedAt}`;
}

export function anchorTreeItem(node: AnchorNode): vscode.TreeItem {
  const { anchor } = node;
  const item = new vscode.TreeItem(anchorPlace(anchor), vscode.TreeItemCollapsibleState.None);
  item.description = anchor.status;
  item.iconPath = driftIcon(anchor.status);
  const { start, end } = shownLines(anchor);
  const where = start === end ? `line ${start}` : `lines ${start}-${end}`;
  const against = anchor.checkedAgainst === "buffer" ? " (checked against the open editor)" : anchor.checkedAgainst === "disk" ? " (checked against the file on disk)" : "";
  const renamed = anchor.currentPath ? ` (renamed from ${anchor.path})` : "";
  item.tooltip = [`${shownPath(anchor)}${renamed}, ${where}: ${anchor.status}${against}`, driftMeaning(anchor.status), captured(anchor)].join("\n");
  item.command = { command: "lecode.openFactSource", title: "Go to Source", arguments: [node] };
  item.contextValue = `lecode.factAnchor.${anchor.status}`;
  return item;
}
