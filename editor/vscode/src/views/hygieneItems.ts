/**
 * The memory-hygiene part of the Facts tree, per project: a "Memory health" node at the top (the
 * numbers of `lecode/memory/doctor`, each with the fact IDs behind it, as its children), and a
 * "Proposed retirements" node (the `retirements` of the first page of `lecode/facts/list`, shown
 * only when there are any) whose children are the proposals, each retired or kept by the person.
 *
 * A proposal names its fact by ID; its label is the fact's text when the listing read that fact
 * (the text is untrusted: it is only shown, as a plain label and a plain-text tooltip).
 */
import * as vscode from "vscode";
import type { CountedIds, DoctorResult, FactEntry, RetirementModel } from "../common/protocol";
import type { FactNode, FactNodeOf, HealthRow } from "./nodes";

/** `#1, #4, #7`, and how many more the doctor counted than it named. */
export function idsPhrase(counted: CountedIds): string {
  const named = counted.ids.map((id) => `#${id}`).join(", ");
  const more = counted.count - counted.ids.length;
  return more > 0 ? `${named} and ${more} more` : named;
}

const plural = (count: number, one: string, many = `${one}s`): string => `${count} ${count === 1 ? one : many}`;

/** Every number of the doctor, in the order a person reads them. */
export function doctorRows(doctor: DoctorResult): HealthRow[] {
  const counted = (label: string, value: CountedIds, meaning: string): HealthRow => ({
    label,
    count: value.count,
    ids: value.ids,
    meaning,
    detail: idsPhrase(value),
  });
  const { byStatus } = doctor;
  const moreGroups = doctor.duplicates.count - doctor.duplicates.groups.length;
  const rows: HealthRow[] = [
    { label: "Facts", count: doctor.facts, meaning: "How many facts are stored.", detail: "" },
    counted("Valid", byStatus.valid, "Facts whose evidence validates now."),
    counted("Retired", byStatus.retired, "Retired facts: listed and recallable, not injected; Restore Fact brings one back."),
    counted("Unverified", byStatus.unverified, "Facts with no source reference."),
    counted("Hidden", byStatus.hidden, "Facts whose evidence was undone, cleared or excluded by a forget."),
    counted("Missing", byStatus.missing, "Facts whose source session is gone."),
    counted("Stale", byStatus.stale, "Facts whose source transcript changed or is damaged."),
    counted("Drifted anchors", doctor.drifted, "Facts with a code anchor changed or deleted."),
    counted("All anchors deleted", doctor.anchorsDeleted, "Facts whose anchors are all deleted."),
    {
      label: "Duplicates",
      count: doctor.duplicates.count,
      meaning: "Groups of stored facts that say the same thing (stored before remembering refused duplicates): correct or forget one of each.",
      detail: doctor.duplicates.groups.map((group) => group.map((id) => `#${id}`).join(" = ")).join("; ") + (moreGroups > 0 ? ` and ${moreGroups} more` : ""),
    },
    counted("Never used", doctor.neverUsed, "Facts never shown to a model, recalled by ID or found by a query."),
    counted("Proposed retirements", doctor.proposedRetirements, "Facts unused for lecode.memory.retire_after_days: retire or keep each under Proposed retirements."),
    counted("Proposed corrections", doctor.proposedCorrections, "Facts the latest learning's proposals would correct."),
  ];
  for (const note of doctor.notes) {
    rows.push({
      label: note.file,
      count: note.cut,
      meaning: `${note.file} against its share of the memory injected into a chat request.`,
      detail: `${note.bytes} bytes, ${note.shown} shown, ${note.cut} cut`,
    });
  }
  return rows;
}

/** `12 facts · 3 duplicates · 2 to retire`: the numbers that ask for something, in short. */
export function doctorSummary(doctor: DoctorResult): string {
  const parts = [plural(doctor.facts, "fact")];
  const add = (count: number, words: string) => count > 0 && parts.push(`${count} ${words}`);
  add(doctor.duplicates.count, doctor.duplicates.count === 1 ? "duplicate" : "duplicates");
  add(doctor.proposedRetirements.count, "to retire");
  add(doctor.proposedCorrections.count, "to correct");
  add(doctor.drifted.count, "drifted");
  add(doctor.byStatus.retired.count, "retired");
  add(doctor.neverUsed.count, "never used");
  for (const note of doctor.notes.filter((share) => share.cut > 0)) {
    parts.push(`${note.file} cut by ${plural(note.cut, "byte")}`);
  }
  return parts.join(" · ");
}

export function healthTreeItem(node: FactNodeOf<"health">): vscode.TreeItem {
  const { doctor } = node;
  const item = new vscode.TreeItem("Memory health", vscode.TreeItemCollapsibleState.Collapsed);
  item.contextValue = "lecode.health";
  if ("problem" in doctor) {
    item.description = "not available";
    item.tooltip = `lecode/memory/doctor answered: ${doctor.problem}`;
    item.iconPath = new vscode.ThemeIcon("warning", new vscode.ThemeColor("list.warningForeground"));
    item.collapsibleState = vscode.TreeItemCollapsibleState.None;
    return item;
  }
  item.description = doctorSummary(doctor);
  item.tooltip = ["The memory doctor (lecode/memory/doctor): every number with the facts behind it.", ""]
    .concat(doctorRows(doctor).map((row) => `${row.label}: ${row.count}${row.detail === "" ? "" : ` (${row.detail})`}`))
    .join("\n");
  item.iconPath = new vscode.ThemeIcon("pulse");
  return item;
}

export function healthRows(node: FactNodeOf<"health">): FactNode[] {
  const { doctor, folderUri } = node;
  return "problem" in doctor ? [] : doctorRows(doctor).map((row): FactNode => ({ kind: "healthRow", row, folderUri }));
}

export function healthRowTreeItem(node: FactNodeOf<"healthRow">): vscode.TreeItem {
  const { row } = node;
  const item = new vscode.TreeItem(`${row.label}: ${row.count}`, vscode.TreeItemCollapsibleState.None);
  item.description = row.detail;
  item.tooltip = row.detail === "" ? row.meaning : `${row.meaning}\n${row.detail}`;
  item.contextValue = "lecode.healthRow";
  return item;
}

/** The "Proposed retirements" node of a project, when the listing proposed any. */
export function retirementsNode(folderUri: string, retirements: readonly RetirementModel[] | undefined, facts: FactEntry[]): FactNode[] {
  return retirements && retirements.length > 0 ? [{ kind: "retirements", retirements: [...retirements], facts, folderUri }] : [];
}

export function retirementNodes(node: FactNodeOf<"retirements">): FactNode[] {
  const byId = new Map(node.facts.map((fact) => [fact.factId, fact]));
  return node.retirements.map((retirement): FactNode => ({ kind: "retirement", retirement, fact: byId.get(retirement.factId), folderUri: node.folderUri }));
}

export function retirementsTreeItem(node: FactNodeOf<"retirements">): vscode.TreeItem {
  const count = node.retirements.length;
  const item = new vscode.TreeItem("Proposed retirements", vscode.TreeItemCollapsibleState.Collapsed);
  item.description = String(count);
  item.tooltip =
    `${plural(count, "fact")} unused for lecode.memory.retire_after_days, the longest unused first. ` +
    "Retire one to take it out of chat's memory (it stays listed and restorable), or keep it: nothing is retired until you say so.";
  item.iconPath = new vscode.ThemeIcon("archive");
  item.contextValue = "lecode.retirements";
  return item;
}

/** The text of the fact a proposal names, on one line, or `Fact #id` when the listing did not read it. */
export function retirementLabel(node: FactNodeOf<"retirement">): string {
  const text = node.fact?.text?.replace(/\s+/g, " ").trim();
  return text ? text : `Fact #${node.retirement.factId}`;
}

export function retirementTreeItem(node: FactNodeOf<"retirement">): vscode.TreeItem {
  const { retirement, fact } = node;
  // A plain string label and tooltip: VS Code renders neither as Markdown.
  const item = new vscode.TreeItem(retirementLabel(node), vscode.TreeItemCollapsibleState.None);
  item.description = `#${retirement.factId} · ${retirement.why}`;
  const lines = [`Fact #${retirement.factId} is proposed for retirement: ${retirement.why}.`];
  if (fact?.text) {
    lines.push("", fact.text, "", "Untrusted data, not instructions.");
  }
  lines.push("", "Retire: it leaves chat's memory but stays listed, recallable and restorable. Keep: its unused clock starts again.");
  item.tooltip = lines.join("\n");
  item.iconPath = new vscode.ThemeIcon("history");
  item.contextValue = "lecode.retirement";
  return item;
}
