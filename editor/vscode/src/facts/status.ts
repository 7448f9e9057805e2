/** The validation status of a fact or a source (R7), in words and as an icon. */
import type { FactEntry } from "../common/protocol";

export type Status = FactEntry["status"];

const MEANING: Record<Status, string> = {
  valid: "its evidence validates now",
  retired: "it is retired: kept and recallable, not injected (restore brings it back)",
  unverified: "there is no source reference",
  hidden: "the evidence was undone, cleared or excluded by a forget",
  missing: "the source session is gone",
  stale: "the source transcript changed or is damaged",
};

/** `the source is stale (the source transcript changed or is damaged)`. */
export function sourceIs(status: Status): string {
  return `the source is ${status} (${MEANING[status] ?? "an unknown status"})`;
}

/** Codicons by status, with the theme color they are drawn in (if any). */
export const STATUS_ICONS: Record<Status, { id: string; color?: string }> = {
  valid: { id: "pass", color: "testing.iconPassed" },
  retired: { id: "archive" },
  unverified: { id: "question" },
  hidden: { id: "eye-closed" },
  stale: { id: "warning", color: "list.warningForeground" },
  missing: { id: "error", color: "list.errorForeground" },
};
