/**
 * Transcript document URIs: they survive VS Code's string round trip, name only exact session
 * IDs, and the range around cited records stays inside the session and within 200 positions.
 */
// covers P7 (recall-to-source navigation), S4 (exact session IDs), S2 (at most 200 positions)
import { describe, expect, it } from "vitest";
import * as vscode from "vscode";
import { contextRange, parseTranscriptUri, transcriptUri } from "../src/sessions/uri";

const SESSION = "20261129T100000Z-3f2a9c41";

describe("transcriptUri", () => {
  it("round-trips through its string form, workspace URI and fact included", () => {
    const location = { sessionId: SESSION, startSeq: 2, endSeq: 9, workspaceUri: "file:///home/me/my%20app?x=1&y#z", factId: 12 };
    const uri = transcriptUri(location);
    expect(uri.scheme).toBe("lecode-transcript");
    expect(uri.path).toBe(`/${SESSION}.transcript`);
    expect(parseTranscriptUri(vscode.Uri.parse(uri.toString()))).toEqual(location);
  });

  it("leaves out what is not given", () => {
    const location = { sessionId: SESSION, startSeq: 1, endSeq: 1 };
    expect(parseTranscriptUri(vscode.Uri.parse(transcriptUri(location).toString()))).toEqual(location);
  });

  it.each([
    ["a path instead of a session ID", "lecode-transcript:/..%2F..%2Fetc%2Fpasswd.transcript?start=1&end=2"],
    ["a session prefix", "lecode-transcript:/20261129T100000Z.transcript?start=1&end=2"],
    ["no range", `lecode-transcript:/${SESSION}.transcript?workspace=file%3A%2F%2F%2Fp`],
    ["a range that ends before it starts", `lecode-transcript:/${SESSION}.transcript?start=5&end=2`],
    ["a negative seq", `lecode-transcript:/${SESSION}.transcript?start=-1&end=2`],
  ])("refuses %s with a sentence", (_what, text) => {
    expect(parseTranscriptUri(vscode.Uri.parse(text))).toEqual({ problem: expect.stringContaining("does not name") });
  });
});

describe("contextRange", () => {
  it("adds up to three records of context on each side, never the header", () => {
    expect(contextRange([5, 6], 20)).toEqual({ startSeq: 2, endSeq: 9 });
    expect(contextRange([2], 20)).toEqual({ startSeq: 1, endSeq: 5 });
  });

  it("stops at the session's last record, and adds none after when the length is unknown", () => {
    expect(contextRange([8, 9], 10)).toEqual({ startSeq: 5, endSeq: 9 });
    expect(contextRange([8, 9], undefined)).toEqual({ startSeq: 5, endSeq: 9 });
  });

  it("keeps the whole range within 200 positions", () => {
    expect(contextRange([10, 208], 500)).toEqual({ startSeq: 10, endSeq: 209 });
    expect(contextRange([10, 209], 500)).toEqual({ startSeq: 10, endSeq: 209 });
    const { startSeq, endSeq } = contextRange([50, 246], 500);
    expect(endSeq - startSeq + 1).toBe(200);
  });
});
