/** `/memory` completion in the chat's text box: `/` offers `/memory`, then its subcommands. */
// covers T5 (/memory subcommands), P7 (chat panel)
import { describe, expect, it } from "vitest";
import { completions } from "../src/chat/completion";

const labels = (text: string) => completions(text).map((c) => c.label);

describe("completions", () => {
  it("offers /memory for a slash and for any prefix of it", () => {
    for (const text of ["/", "/m", "/me", "/memor"]) {
      expect(completions(text), text).toEqual([{ label: "/memory", insert: "/memory ", detail: "memory commands" }]);
    }
  });

  it("offers every subcommand after /memory, in the order of /memory help", () => {
    const all = ["show", "edit", "search", "log", "notes", "facts", "pin", "unpin", "recall", "read", "correct", "forget", "help"];
    expect(labels("/memory")).toEqual(all.map((name) => `/memory ${name}`));
    expect(labels("/memory ")).toEqual(all.map((name) => `/memory ${name}`));
  });

  it("filters the subcommands by what is typed", () => {
    expect(labels("/memory re")).toEqual(["/memory recall", "/memory read"]);
    expect(labels("/memory s")).toEqual(["/memory show", "/memory search"]);
  });

  it("leaves a space after a subcommand that takes arguments, and none after one that does not", () => {
    expect(completions("/memory sea")[0]).toMatchObject({ insert: "/memory search ", detail: expect.stringContaining("<pattern>") });
    expect(completions("/memory no")[0]).toMatchObject({ insert: "/memory notes" });
  });

  it("offers nothing once the command is complete or the text is something else", () => {
    for (const text of ["", "hello", "/x", "/memory show", "/memory search make", "/memory\nshow", "a /memory"]) {
      expect(completions(text), text).toEqual([]);
    }
  });
});
