/**
 * The turn reducer: deltas and history items become what the chat view shows. Text pieces join,
 * tool results pair with their calls by callId, the memory of every model request of a turn is
 * unioned, and a session's history splits into turns.
 */
// covers P7 (chat panel), P3 (chat streaming)
import { describe, expect, it } from "vitest";
import type { ChatHistoryItem, UsageModel } from "../src/common/protocol";
import { type ChatItem, applyDeltas, failTurn, finishTurn, newTurn, stopNote, turnsFromHistory } from "../src/chat/turn";
import { SeqOrder } from "../src/chat/order";

const usage = (calls: number, tokens: number): UsageModel => ({
  calls,
  promptTokens: tokens,
  completionTokens: 1,
  totalTokens: tokens + 1,
  unknownUsageCalls: 0,
});

describe("applyItem over deltas", () => {
  it("joins text pieces into one Markdown part", () => {
    const turn = applyDeltas(newTurn("How do I build?"), [
      { kind: "text", text: "Run " },
      { kind: "text", text: "`make`" },
      { kind: "text", text: "." },
    ]);
    expect(turn).toEqual({ ...newTurn("How do I build?"), parts: [{ kind: "text", text: "Run `make`." }] });
  });

  it("pairs each tool result with its call by callId, whatever order they finish in", () => {
    const turn = applyDeltas(newTurn("q"), [
      { kind: "text", text: "Let me look." },
      { kind: "toolCall", callId: "a", name: "memory_read", arguments: '{"file":"MEMORY.md"}' },
      { kind: "toolCall", callId: "b", name: "memory_search", arguments: '{"pattern":"make"}' },
      { kind: "toolResult", callId: "b", name: "memory_search", output: "notes/build.md:1: make", isError: false },
      { kind: "toolResult", callId: "a", name: "memory_read", output: "denied", isError: true },
      { kind: "text", text: "Done." },
    ]);
    expect(turn.parts).toEqual([
      { kind: "text", text: "Let me look." },
      { kind: "tool", callId: "a", name: "memory_read", arguments: '{"file":"MEMORY.md"}', output: "denied", isError: true },
      { kind: "tool", callId: "b", name: "memory_search", arguments: '{"pattern":"make"}', output: "notes/build.md:1: make", isError: false },
      { kind: "text", text: "Done." },
    ]);
  });

  it("still shows a tool result whose call it never saw", () => {
    const turn = applyDeltas(newTurn("q"), [{ kind: "toolResult", callId: "x", name: "memory_list", output: "[]" }]);
    expect(turn.parts).toEqual([{ kind: "tool", callId: "x", name: "memory_list", arguments: "", output: "[]", isError: false }]);
  });

  it("takes the union of the memory injected into each model request of the turn", () => {
    const turn = applyDeltas(newTurn("q"), [
      { kind: "memory", facts: [{ factId: 12, revision: 2 }, { factId: 3, revision: 1 }], notes: ["MEMORY.md"] },
      { kind: "memory", facts: [{ factId: 12, revision: 2 }, { factId: 12, revision: 3 }], notes: ["MEMORY.md", "scratchpad.md"] },
      { kind: "memory", facts: null, notes: null },
    ]);
    expect(turn.memory).toEqual({
      facts: [
        { factId: 12, revision: 2 },
        { factId: 3, revision: 1 },
        { factId: 12, revision: 3 },
      ],
      notes: ["MEMORY.md", "scratchpad.md"],
    });
  });

  it("adds up the usage of each provider call and keeps errors in place", () => {
    const turn = applyDeltas(newTurn("q"), [
      { kind: "usage", usage: usage(1, 100) },
      { kind: "usage", usage: null },
      { kind: "error", message: "provider: 429 Too Many Requests", code: "provider_error" },
      { kind: "usage", usage: usage(1, 50) },
    ]);
    expect(turn.usage).toEqual({ calls: 2, promptTokens: 150, completionTokens: 2, totalTokens: 152, unknownUsageCalls: 0 });
    expect(turn.parts).toEqual([{ kind: "error", message: "provider: 429 Too Many Requests", code: "provider_error" }]);
  });

  it("points a refused key to the command that stores one", () => {
    // covers K2
    const message = "the provider refused the request (HTTP 401): no API key was sent, because the environment variable OPENAI_API_KEY is not set";
    const turn = applyDeltas(newTurn("q"), [{ kind: "error", message, code: "provider_auth" }]);
    expect(turn.parts).toEqual([
      {
        kind: "error",
        message: `${message}. Run "lecode: Set API Key" from the Command Palette to store the key in VS Code.`,
        code: "provider_auth",
      },
    ]);
  });

  it("does not change the turn it is given", () => {
    const before = newTurn("q");
    applyDeltas(before, [{ kind: "text", text: "x" }]);
    expect(before.parts).toEqual([]);
  });
});

describe("the end of a turn", () => {
  const result = { turnId: "t-1", usage: usage(2, 10) };

  it("is done when the model stopped, with the answer's turnId and usage", () => {
    expect(finishTurn(newTurn("q"), { ...result, stopReason: "stop" })).toMatchObject({ state: "done", turnId: "t-1", usage: result.usage });
  });

  it("is cancelled when the send answered stopReason cancelled", () => {
    const turn = finishTurn(newTurn("q"), { ...result, stopReason: "cancelled" });
    expect(turn.state).toBe("cancelled");
    expect(stopNote(turn)).toBe("Stopped.");
  });

  it("says why an answer ended early", () => {
    expect(stopNote(finishTurn(newTurn("q"), { ...result, stopReason: "length" }))).toMatch(/output limit/);
    expect(stopNote(finishTurn(newTurn("q"), { ...result, stopReason: "paused" }))).toMatch(/context window/);
    expect(stopNote(finishTurn(newTurn("q"), { ...result, stopReason: "stop" }))).toBeUndefined();
  });

  it("shows one notice per compaction, the start replaced by how it ended, and a pause", () => {
    let turn = applyDeltas(newTurn("q"), [
      { kind: "compaction", status: "started" },
      { kind: "compaction", status: "compacted" },
      { kind: "compaction", status: "started" },
      { kind: "compaction", status: "nothing", message: "no complete exchange" },
      { kind: "paused", message: "the window is full" },
    ]);
    expect(turn.parts).toEqual([
      { kind: "notice", topic: "compaction", message: "Compacted the earlier conversation into a working summary." },
      { kind: "notice", topic: "compaction", message: "Nothing could be compacted. no complete exchange" },
      { kind: "notice", topic: "paused", message: "the window is full" },
    ]);
    turn = applyDeltas(newTurn("q"), [{ kind: "compaction", status: "started" }]);
    expect(turn.parts).toEqual([{ kind: "notice", topic: "compaction", message: "Compacting the earlier conversation…" }]);
  });

  it("says how automatic learning went after the compaction the server reports it inside of", () => {
    // The server sends the learning that follows a compaction before the compaction's end.
    const turn = applyDeltas(newTurn("q"), [
      { kind: "compaction", status: "started" },
      { kind: "learning", status: "learned", facts: [{ factId: 4, revision: 1 }] },
      { kind: "compaction", status: "compacted" },
      { kind: "compaction", status: "started" },
      { kind: "learning", status: "proposed", facts: [] },
      { kind: "compaction", status: "compacted" },
    ]);
    expect(turn.parts).toEqual([
      { kind: "notice", topic: "compaction", message: "Compacted the earlier conversation into a working summary." },
      { kind: "notice", topic: "learning", message: "Automatic learning remembered fact #4." },
      { kind: "notice", topic: "compaction", message: "Compacted the earlier conversation into a working summary." },
      { kind: "notice", topic: "learning", message: "Automatic learning left proposals to review in the Facts view." },
    ]);
    const other = applyDeltas(newTurn("q"), [
      { kind: "learning", status: "learned", facts: [{ factId: 4, revision: 1 }, { factId: 5, revision: 2 }] },
      { kind: "learning", status: "rejected" },
      { kind: "learning", status: "something_new" },
    ]);
    expect(other.parts.map((part) => (part.kind === "notice" ? part.message : part.kind))).toEqual([
      "Automatic learning remembered facts #4, #5.",
      "Automatic learning remembered nothing: no candidate passed the evidence checks (the Facts view counts why).",
      "Automatic learning: something_new.",
    ]);
  });

  it("shows a failed request as an error in place, and a stopped one as cancelled", () => {
    expect(failTurn(newTurn("q"), "session_busy: a turn is running", false)).toMatchObject({
      state: "failed",
      parts: [{ kind: "error", message: "session_busy: a turn is running" }],
    });
    expect(failTurn(newTurn("q"), "Request cancelled", true)).toMatchObject({ state: "cancelled", parts: [] });
  });
});

describe("turnsFromHistory", () => {
  const item = (seq: number, turnId: string | null, rest: Omit<ChatItem, "seq">): ChatHistoryItem =>
    ({ seq, turnId, ...rest }) as ChatHistoryItem;

  it("starts a turn at each message of the person and keeps each assistant message a part of its own", () => {
    const turns = turnsFromHistory([
      item(1, "t1", { kind: "user", text: "How do I build?" }),
      item(2, "t1", { kind: "memory", facts: [{ factId: 1, revision: 1 }], notes: [] }),
      item(3, "t1", { kind: "text", text: "Checking." }),
      item(4, "t1", { kind: "toolCall", callId: "c", name: "memory_read", arguments: "{}" }),
      item(5, "t1", { kind: "toolResult", callId: "c", name: "memory_read", output: "make", isError: false }),
      item(6, "t1", { kind: "text", text: "Run `make`." }),
      item(7, "t2", { kind: "user", text: "And test?" }),
      item(8, "t2", { kind: "cancelled" }),
    ]);
    expect(turns).toEqual([
      {
        kind: "turn",
        turnId: "t1",
        user: "How do I build?",
        state: "done",
        memory: { facts: [{ factId: 1, revision: 1 }], notes: [] },
        parts: [
          { kind: "text", text: "Checking." },
          { kind: "tool", callId: "c", name: "memory_read", arguments: "{}", output: "make", isError: false },
          { kind: "text", text: "Run `make`." },
        ],
      },
      { kind: "turn", turnId: "t2", user: "And test?", state: "cancelled", memory: { facts: [], notes: [] }, parts: [] },
    ]);
  });

  it("starts a turn when the turnId changes, even without a message of the person (truncated history)", () => {
    const turns = turnsFromHistory([item(9, "t1", { kind: "text", text: "end of one" }), item(10, "t2", { kind: "text", text: "other" })]);
    expect(turns.map((turn) => [turn.turnId, turn.user, turn.parts])).toEqual([
      ["t1", undefined, [{ kind: "text", text: "end of one" }]],
      ["t2", undefined, [{ kind: "text", text: "other" }]],
    ]);
  });

  it("keeps a failed turn's \"The provider failed.\" line when read back after a reload", () => {
    const [turn] = turnsFromHistory([
      item(1, "t1", { kind: "user", text: "hi" }),
      item(2, "t1", { kind: "error", message: "the provider answered HTTP 500: down", code: "provider_error" }),
    ]);
    expect(turn.parts).toEqual([{ kind: "error", message: "the provider answered HTTP 500: down", code: "provider_error" }]);
    expect(stopNote(turn)).toBe("The provider failed.");
  });

  it("keeps imported records (no turnId) with the message before them", () => {
    const turns = turnsFromHistory([item(1, null, { kind: "user", text: "hi" }), item(2, null, { kind: "text", text: "hello" })]);
    expect(turns).toHaveLength(1);
    expect(turns[0]).toMatchObject({ user: "hi", parts: [{ kind: "text", text: "hello" }] });
  });
});

describe("SeqOrder", () => {
  const d = (seq: number) => ({ seq });

  it("passes deltas that arrive in order straight through", () => {
    const order = new SeqOrder<{ seq: number }>();
    expect([0, 1, 2].map((seq) => order.push(d(seq)))).toEqual([[d(0)], [d(1)], [d(2)]]);
  });

  it("holds an early delta until the ones before it arrive", () => {
    const order = new SeqOrder<{ seq: number }>();
    expect(order.push(d(2))).toEqual([]);
    expect(order.push(d(1))).toEqual([]);
    expect(order.push(d(0))).toEqual([d(0), d(1), d(2)]);
  });

  it("drops a repeated seq", () => {
    const order = new SeqOrder<{ seq: number }>();
    order.push(d(0));
    expect(order.push(d(0))).toEqual([]);
    order.push(d(2));
    expect(order.push(d(2))).toEqual([]);
  });

  it("gives up on a missing seq at the end of the turn, keeping the order of the rest", () => {
    const order = new SeqOrder<{ seq: number }>();
    order.push(d(0));
    order.push(d(4));
    order.push(d(2));
    expect(order.drain()).toEqual([d(2), d(4)]);
    expect(order.push(d(3))).toEqual([]);
    expect(order.push(d(5))).toEqual([d(5)]);
  });
});
