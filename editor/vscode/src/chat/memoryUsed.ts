/**
 * The "memory used" of a turn, as the page shows it: what was read (the facts and memory files
 * injected into its model requests, and what the memory tools read) apart from what was changed
 * (the write-class memory tools), and each fact with its text and drift as the Facts view knows
 * it now. Pure data and functions: the host builds the fact views, the page draws them.
 */
import type { FactView } from "./messages";
import type { Turn } from "./turn";

/** The memory tools that change memory, and the argument that names what they change. */
const WRITES: Record<string, "file" | "fact_id"> = {
  memory_write: "file",
  memory_edit: "file",
  memory_correct: "fact_id",
  memory_forget: "fact_id",
};
const VERB: Record<string, string> = {
  memory_write: "written",
  memory_edit: "edited",
  memory_correct: "corrected",
  memory_forget: "forgotten",
};

/** One change a write-class tool made (or was refused): "MEMORY.md written", "fact #3 forgotten". */
export interface MemoryWrite {
  tool: string;
  /** A memory file, or a fact ID. */
  target: { kind: "note"; file: string } | { kind: "fact"; factId: number };
  /** What it did, or that it was refused or failed. */
  outcome: string;
}

function argument(text: string, key: string): unknown {
  try {
    return (JSON.parse(text) as Record<string, unknown>)[key];
  } catch {
    return undefined;
  }
}

/** The turn's memory changes, in order (a call still running says so). */
export function memoryWrites(turn: Turn): MemoryWrite[] {
  const writes: MemoryWrite[] = [];
  for (const part of turn.parts) {
    if (part.kind !== "tool" || !(part.name in WRITES)) {
      continue;
    }
    const value = argument(part.arguments, WRITES[part.name]);
    const target =
      typeof value === "string" && value !== ""
        ? ({ kind: "note", file: value } as const)
        : Number.isSafeInteger(value) && (value as number) > 0
          ? ({ kind: "fact", factId: value as number } as const)
          : undefined;
    if (target === undefined) {
      continue;
    }
    const outcome = part.output === undefined ? "running" : part.isError ? "refused" : VERB[part.name];
    writes.push({ tool: part.name, target, outcome });
  }
  return writes;
}

/** Where an anchor is now, for the drift mark: `app.py:2` or `app.py:2-4`. */
export function placeOf(anchor: { path: string; currentPath?: string | null; startLine: number; endLine: number }): string {
  const lines = anchor.startLine === anchor.endLine ? `${anchor.startLine}` : `${anchor.startLine}-${anchor.endLine}`;
  return `${anchor.currentPath ?? anchor.path}:${lines}`;
}

/** How the page names a fact of the "memory used" list: its text, or why there is none. */
export function factLabel(factId: number, revision: number, view: FactView | undefined): { text: string; known: boolean } {
  if (view === undefined) {
    return { text: `fact #${factId} r${revision}`, known: false };
  }
  if (view.text === undefined) {
    return { text: `fact #${factId} (${view.status} now: its text is not shown)`, known: false };
  }
  return { text: view.text, known: true };
}
