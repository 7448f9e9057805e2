/** The chat view's usage sentence: the known totals, and the calls whose usage is unknown. */
// covers C10
import { describe, expect, it } from "vitest";
import { NO_USAGE, addUsage, usagePhrase } from "../src/chat/usage";

describe("usagePhrase", () => {
  it("says when no call was made", () => {
    expect(usagePhrase(NO_USAGE)).toBe("Session usage: no model calls yet");
  });

  it("gives the known tokens and counts the unknown calls apart", () => {
    const one = { calls: 1, promptTokens: 1200, completionTokens: 34, totalTokens: 1234, unknownUsageCalls: 0 };
    expect(usagePhrase(one)).toBe("Session usage: 1,234 tokens (1,200 prompt, 34 completion) in 1 call");
    const unknown = { ...NO_USAGE, calls: 1, unknownUsageCalls: 1 };
    expect(usagePhrase(addUsage(one, unknown))).toBe(
      "Session usage: 1,234 tokens (1,200 prompt, 34 completion) in 2 calls; usage unknown for 1 of them",
    );
  });

  it("gives the share of the prompt the provider served from its cache (issue 40)", () => {
    const one = { calls: 1, promptTokens: 1000, completionTokens: 10, totalTokens: 1010, unknownUsageCalls: 0, cachedTokens: 850 };
    const two = { calls: 1, promptTokens: 1000, completionTokens: 10, totalTokens: 1010, unknownUsageCalls: 0 };
    expect(usagePhrase(addUsage(one, two))).toBe(
      "Session usage: 2,020 tokens (2,000 prompt, 20 completion) in 2 calls; 850 prompt tokens (43%) from the provider's cache",
    );
    expect(usagePhrase(addUsage(two, two))).not.toContain("cache");
  });
});
