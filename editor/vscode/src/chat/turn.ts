/**
 * What the chat view shows, built from chat items: the `lecode/chat/delta` notifications of a
 * running turn and the `lecode/chat/history` items of a past session have one shape.
 *
 * Pure data and functions (no VS Code, no DOM): the extension host reduces items into entries and
 * the webview page renders the entries it is sent.
 */
import type { ChatDeltaParams, ChatHistoryItem, ChatSendResult, InjectedFactModel, UsageModel } from "../common/protocol";
import { addUsage } from "./usage";

/** A delta or a history item: what `applyItem` reads. */
export type ChatItem = Pick<ChatDeltaParams, Exclude<keyof ChatDeltaParams, "kind" | "sessionId" | "turnId" | "seq">> & {
  kind: ChatDeltaParams["kind"] | ChatHistoryItem["kind"];
};

export type StopReason = ChatSendResult["stopReason"];

export interface TextPart {
  kind: "text";
  /** Markdown from the model (untrusted). */
  text: string;
}

export interface ToolPart {
  kind: "tool";
  callId: string;
  name: string;
  /** The arguments as the model wrote them (JSON text). */
  arguments: string;
  /** What the tool returned (untrusted); absent until its result arrives. */
  output?: string;
  isError?: boolean;
}

export interface ErrorPart {
  kind: "error";
  message: string;
  code?: string;
}

/** What the server did for the turn (compaction, automatic learning, a pause), shown in place. */
export interface NoticePart {
  kind: "notice";
  /** "compaction" while one runs and after; "learning" after a compaction; "paused". */
  topic: "compaction" | "learning" | "paused";
  message: string;
}

export type Part = TextPart | ToolPart | ErrorPart | NoticePart;

const COMPACTION: Record<string, string> = {
  started: "Compacting the earlier conversation…",
  compacted: "Compacted the earlier conversation into a working summary.",
  nothing: "Nothing could be compacted.",
  rejected: "The summary was rejected; the conversation stays as it was.",
  failed: "Compaction failed.",
  stale: "The summary was discarded: the session or its memory changed meanwhile.",
};

const LEARNING: Record<string, string> = {
  no_candidates: "Automatic learning found nothing to remember.",
  rejected: "Automatic learning remembered nothing: no candidate passed the evidence checks (the Facts view counts why).",
  learned: "Automatic learning remembered",
  proposed: "Automatic learning left proposals to review in the Facts view.",
  failed: "Automatic learning failed; the summary is kept.",
  stale: "Automatic learning was discarded: memory changed while it ran.",
};

/** The sentence of a `learning` item: how automatic learning after a compaction went. */
function learningNotice(status: string, facts: readonly InjectedFactModel[]): string {
  if (status === "learned") {
    const ids = facts.map((fact) => `#${fact.factId}`).join(", ");
    return `${LEARNING.learned} ${facts.length === 1 ? "fact" : "facts"} ${ids}.`;
  }
  return LEARNING[status] ?? `Automatic learning: ${status}.`;
}

/** The memory injected into the turn's model requests: the union over all of them. */
export interface MemoryUsed {
  facts: InjectedFactModel[];
  notes: string[];
}

/** One exchange: the person's message and the agent's answer, tool calls and errors in order. */
export interface Turn {
  kind: "turn";
  turnId?: string;
  /** The person's message (absent for history that starts in the middle of a turn). */
  user?: string;
  parts: Part[];
  memory: MemoryUsed;
  /** `running` while deltas arrive; `cancelled` after a stop; `failed` when the request failed. */
  state: "running" | "done" | "cancelled" | "failed";
  /** Why the model stopped, when the send answered (history does not say). */
  stopReason?: StopReason;
  usage?: UsageModel;
}

/** A `/memory ...` line and its answer (`lecode/command`), shown in place. */
export interface CommandEntry {
  kind: "command";
  line: string;
  state: "running" | "done" | "failed";
  /** Markdown from the server when done; the error's sentence when failed. */
  output: string;
}

export type Entry = Turn | CommandEntry;

export function newTurn(user?: string, state: Turn["state"] = "running"): Turn {
  return { kind: "turn", user, parts: [], memory: { facts: [], notes: [] }, state };
}

function union<T>(known: readonly T[], more: readonly T[], same: (a: T, b: T) => boolean): T[] {
  const out = [...known];
  for (const item of more) {
    if (!out.some((seen) => same(seen, item))) {
      out.push(item);
    }
  }
  return out;
}

function addKnownUsage(known: UsageModel | undefined, more: UsageModel): UsageModel {
  return known === undefined ? more : addUsage(known, more);
}

/** The index of the last "Compacting…" notice that has not been told how it ended, or -1. */
function runningCompaction(parts: readonly Part[]): number {
  for (let i = parts.length - 1; i >= 0; i--) {
    const part = parts[i];
    if (part.kind === "notice" && part.topic === "compaction" && part.message === COMPACTION.started) {
      return i;
    }
  }
  return -1;
}

/**
 * The turn with one more item applied (the turn itself is not changed). A delta's `text` is the
 * next piece of the answer and joins the text before it; a history item's `text` is a whole
 * message, so with `whole` it starts a part of its own.
 */
export function applyItem(turn: Turn, item: ChatItem, whole = false): Turn {
  const parts = turn.parts;
  const last = parts.at(-1);
  switch (item.kind) {
    case "user":
      return { ...turn, user: (turn.user ?? "") + (item.text ?? "") };
    case "text": {
      const text = item.text ?? "";
      if (!whole && last?.kind === "text") {
        return { ...turn, parts: [...parts.slice(0, -1), { kind: "text", text: last.text + text }] };
      }
      return { ...turn, parts: [...parts, { kind: "text", text }] };
    }
    case "toolCall":
      return {
        ...turn,
        parts: [...parts, { kind: "tool", callId: item.callId ?? "", name: item.name ?? "", arguments: item.arguments ?? "" }],
      };
    case "toolResult": {
      // The result belongs to its call (by callId); a result without a known call still shows.
      const index = parts.findIndex((part) => part.kind === "tool" && part.callId === item.callId && part.output === undefined);
      const result = { output: item.output ?? "", isError: item.isError === true };
      if (index < 0) {
        const orphan: ToolPart = { kind: "tool", callId: item.callId ?? "", name: item.name ?? "", arguments: "", ...result };
        return { ...turn, parts: [...parts, orphan] };
      }
      const call = parts[index] as ToolPart;
      return { ...turn, parts: parts.map((part, i) => (i === index ? { ...call, ...result } : part)) };
    }
    case "memory":
      return {
        ...turn,
        memory: {
          facts: union(turn.memory.facts, item.facts ?? [], (a, b) => a.factId === b.factId && a.revision === b.revision),
          notes: union(turn.memory.notes, item.notes ?? [], (a, b) => a === b),
        },
      };
    case "usage":
      return item.usage ? { ...turn, usage: addKnownUsage(turn.usage, item.usage) } : turn;
    case "error": {
      const code = item.code ?? undefined;
      const message = errorMessage(item.message ?? "the turn failed", code);
      // A turn read back from history has no stopReason of its own: its error item is the reason.
      return { ...turn, stopReason: turn.stopReason ?? "error", parts: [...parts, { kind: "error", message, code }] };
    }
    case "cancelled":
      return { ...turn, state: "cancelled" };
    case "compaction": {
      // One notice per compaction: "started" is replaced by how it ended. The server reports
      // the learning that follows a compaction before the compaction's end, so the "started"
      // notice is looked for before it, not only last.
      const status = item.status ?? "started";
      const text = COMPACTION[status] ?? `Compaction: ${status}.`;
      const notice: NoticePart = { kind: "notice", topic: "compaction", message: item.message ? `${text} ${item.message}` : text };
      const running = status === "started" ? -1 : runningCompaction(parts);
      return { ...turn, parts: running < 0 ? [...parts, notice] : parts.map((part, i) => (i === running ? notice : part)) };
    }
    case "learning":
      return { ...turn, parts: [...parts, { kind: "notice", topic: "learning", message: learningNotice(item.status ?? "", item.facts ?? []) }] };
    case "paused":
      return { ...turn, parts: [...parts, { kind: "notice", topic: "paused", message: item.message ?? "The turn paused." }] };
  }
}

/** What VS Code adds to a provider's refusal of the key: the command that stores one. */
export const SET_API_KEY_HINT = 'Run "lecode: Set API Key" from the Command Palette to store the key in VS Code.';

/** The errors a key stored in VS Code mends: a refused key, or none (or an unusable one) to send. */
const KEY_CODES: ReadonlySet<string | undefined> = new Set(["provider_auth", "provider_key_missing", "provider_key_invalid"]);

/** The server's sentence, with what the person can do in VS Code where there is something. */
export function errorMessage(message: string, code: string | undefined): string {
  return KEY_CODES.has(code) ? `${message}. ${SET_API_KEY_HINT}` : message;
}

/** The turn with deltas applied in the order given (they are already in seq order). */
export function applyDeltas(turn: Turn, deltas: readonly ChatItem[]): Turn {
  return deltas.reduce((next, delta) => applyItem(next, delta), turn);
}

/** The turn once `lecode/chat/send` answered. */
export function finishTurn(turn: Turn, result: ChatSendResult): Turn {
  return {
    ...turn,
    turnId: result.turnId,
    state: result.stopReason === "cancelled" ? "cancelled" : "done",
    stopReason: result.stopReason,
    usage: result.usage,
  };
}

/** The turn when `lecode/chat/send` failed: cancelled if the person stopped it, else the error in place. */
export function failTurn(turn: Turn, message: string, cancelled: boolean): Turn {
  if (cancelled) {
    return { ...turn, state: "cancelled" };
  }
  return { ...turn, state: "failed", parts: [...turn.parts, { kind: "error", message }] };
}

/**
 * A session's history as turns: a `user` item starts a turn, and so does an item of another
 * turn. Imported records have no turnId; they join the turn before them.
 */
export function turnsFromHistory(items: readonly ChatHistoryItem[]): Turn[] {
  const turns: Turn[] = [];
  let current: Turn | undefined;
  for (const item of items) {
    const turnId = item.turnId ?? undefined;
    const otherTurn = current !== undefined && turnId !== undefined && current.turnId !== undefined && current.turnId !== turnId;
    if (current === undefined || item.kind === "user" || otherTurn) {
      current = { ...newTurn(undefined, "done"), turnId };
      turns.push(current);
    }
    const next = applyItem(current, item, true);
    current = { ...next, turnId: next.turnId ?? turnId };
    turns[turns.length - 1] = current;
  }
  return turns;
}

/** A sentence under an answer that ended for a reason other than finishing (undefined otherwise). */
export function stopNote(turn: Turn): string | undefined {
  if (turn.state === "cancelled") {
    return "Stopped.";
  }
  switch (turn.stopReason) {
    case "length":
      return "The answer was cut off: the model reached its output limit.";
    case "contentFilter":
      return "The provider's content filter stopped the answer.";
    case "paused":
      return "Paused: the conversation no longer fits the model's context window, even after compaction.";
    case "error":
      return "The provider failed.";
    case "toolLimit":
      return "Stopped: the model kept calling tools past the limit of rounds.";
    default:
      return undefined;
  }
}
