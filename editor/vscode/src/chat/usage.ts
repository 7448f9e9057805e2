/**
 * The session's usage total in the chat view (C10): what `lecode/chat/history` reports when the
 * session opens, plus the `usage` of every turn and `/compact` answered since. Calls whose usage
 * the provider did not report are counted apart: the token counts are known subtotals.
 */
import type { UsageModel } from "../common/protocol";

export const NO_USAGE: UsageModel = { calls: 0, promptTokens: 0, completionTokens: 0, totalTokens: 0, unknownUsageCalls: 0 };

export function addUsage(total: UsageModel, more: UsageModel): UsageModel {
  return {
    calls: total.calls + more.calls,
    promptTokens: total.promptTokens + more.promptTokens,
    completionTokens: total.completionTokens + more.completionTokens,
    totalTokens: total.totalTokens + more.totalTokens,
    unknownUsageCalls: total.unknownUsageCalls + more.unknownUsageCalls,
    ...sumOf("cachedTokens", total, more),
    ...sumOf("evaluatedTokens", total, more),
  };
}

/** An optional count of both, present when either has it (what the provider said of its cache). */
function sumOf(name: "cachedTokens" | "evaluatedTokens", a: UsageModel, b: UsageModel): Partial<UsageModel> {
  const x = a[name];
  const y = b[name];
  return (x ?? undefined) === undefined && (y ?? undefined) === undefined ? {} : { [name]: (x ?? 0) + (y ?? 0) };
}

const count = (n: number): string => n.toLocaleString("en-US");

/** `Session usage: 2,506 tokens (2,410 prompt, 96 completion) in 2 calls`, and the unknown ones. */
export function usagePhrase(usage: UsageModel): string {
  if (usage.calls === 0) {
    return "Session usage: no model calls yet";
  }
  const calls = `${count(usage.calls)} call${usage.calls === 1 ? "" : "s"}`;
  const tokens = `${count(usage.totalTokens)} tokens (${count(usage.promptTokens)} prompt, ${count(usage.completionTokens)} completion)`;
  const unknown = usage.unknownUsageCalls;
  const unknownPart = unknown === 0 ? "" : `; usage unknown for ${count(unknown)} of them`;
  return `Session usage: ${tokens} in ${calls}${unknownPart}${cachePart(usage)}`;
}

/** `; 1,024 prompt tokens (85%) from the provider's cache`, when the provider said (issue 40). */
function cachePart(usage: UsageModel): string {
  const cached = usage.cachedTokens;
  if (cached === undefined || cached === null) {
    return "";
  }
  const share = usage.promptTokens > 0 ? ` (${Math.round((100 * cached) / usage.promptTokens)}%)` : "";
  return `; ${count(cached)} prompt tokens${share} from the provider's cache`;
}
