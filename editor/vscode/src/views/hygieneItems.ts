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

/** What the "All clear" line says: no number that asks for something is above zero. */
export const ALL_CLEAR =
  "No fact is unverified, hidden, missing, stale, drifted, duplicated, or proposed for retirement or correction, and no note is cut from the memory injected into a chat request.";

/**
 * The doctor's numbers that have something to say, in the order a person reads them: the number
 * of facts, then every other number above zero, and "All clear" when none of those that ask for
 * something is. A fact no session has used yet is "not used yet", not "never used": the doctor
 * counts a fact remembered a minute ago the same as one unused for months, and the latter is
 * the one proposed for retirement (`proposedRetirements`, unused for retire_after_days).
 */
export function doctorRows(doctor: DoctorResult): HealthRow[] {
  // Each number with whether it asks for something (good news and plain counts do not).
  const counted = (asks: boolean, label: string, value: CountedIds, meaning: string): [boolean, HealthRow] => [
    asks,
    { label, count: value.count, ids: value.ids, meaning, detail: idsPhrase(value) },
  ];
  const { byStatus } = doctor;
  const moreGroups = doctor.duplicates.count - doctor.duplicates.groups.length;
  const numbers: [boolean, HealthRow][] = [
    counted(false, "Valid", byStatus.valid, "Facts whose evidence validates now."),
    counted(false, "Retired", byStatus.retired, "Retired facts: listed and recallable, not injected; Restore Fact brings one back."),
    counted(true, "Unverified", byStatus.unverified, "Facts with no source reference."),
    counted(true, "Hidden", byStatus.hidden, "Facts whose evidence was undone, cleared or excluded by a forget."),
    counted(true, "Missing", byStatus.missing, "Facts whose source session is gone."),
    counted(true, "Stale", byStatus.stale, "Facts whose source transcript changed or is damaged."),
    counted(true, "Drifted anchors", doctor.drifted, "Facts with a code anchor changed or deleted."),
    counted(true, "All anchors deleted", doctor.anchorsDeleted, "Facts whose anchors are all deleted."),
    [
      true,
      {
        label: "Duplicates",
        count: doctor.duplicates.count,
        meaning: "Groups of stored facts that say the same thing (stored before remembering refused duplicates): correct or forget one of each.",
        detail: doctor.duplicates.groups.map((group) => group.map((id) => `#${id}`).join(" = ")).join("; ") + (moreGroups > 0 ? ` and ${moreGroups} more` : ""),
      },
    ],
    counted(
      false,
      "Not used yet",
      doctor.neverUsed,
      "Facts not yet shown to a model, recalled by ID or found by a query (a new fact is, until a session uses it). One unused for lecode.memory.retire_after_days is proposed for retirement.",
    ),
    counted(true, "Proposed retirements", doctor.proposedRetirements, "Facts unused for lecode.memory.retire_after_days: retire or keep each under Proposed retirements."),
    counted(true, "Proposed corrections", doctor.proposedCorrections, "Facts the latest learning's proposals would correct."),
    ...doctor.notes.map((note): [boolean, HealthRow] => [
      true,
      {
        label: note.file,
        count: note.cut,
        meaning: `${note.file} against its share of the memory injected into a chat request.`,
        detail: `${note.bytes} bytes, ${note.shown} shown, ${note.cut} cut`,
      },
    ]),
  ];
  const said = numbers.filter(([, row]) => (row.count ?? 0) > 0);
  const clear = said.every(([asks]) => !asks) ? [{ label: "All clear", meaning: ALL_CLEAR, detail: "" }] : [];
  return [{ label: "Facts", count: doctor.facts, meaning: "How many facts are stored.", detail: "" }, ...said.map(([, row]) => row), ...clear];
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
  for (const note of doctor.notes.filter((share) => share.cut > 0)) {
    parts.push(`${note.file} cut by ${plural(note.cut, "byte")}`);
  }
  return parts.join(" · ");
}

/** `Stale: 2`, or the line's label alone when it counts nothing ("All clear"). */
const rowLabel = (row: HealthRow): string => (row.count === undefined ? row.label : `${row.label}: ${row.count}`);

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
    .concat(doctorRows(doctor).map((row) => `${rowLabel(row)}${row.detail === "" ? "" : ` (${row.detail})`}`))
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
  const item = new vscode.TreeItem(rowLabel(row), vscode.TreeItemCollapsibleState.None);
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
