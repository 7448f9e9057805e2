/**
 * URIs of transcript documents (read-only, rendered by TranscriptProvider).
 *
 * `lecode-transcript:/<sessionId>.transcript?workspace=<folder URI>&start=<seq>&end=<seq>[&fact=<id>]`
 *
 * The path names the session (so the editor tab shows it); the query holds the inclusive seq
 * range the document covers (at most 200 positions, one `lecode/session/read`), the workspace
 * folder the requests go through, and, for a fact's evidence, the fact's ID (the document then
 * also shows the fact, and still shows its cited records when the surrounding range cannot be).
 */
import * as vscode from "vscode";

export const TRANSCRIPT_SCHEME = "lecode-transcript";
/** The most positions one `lecode/session/read` covers. */
export const MAX_POSITIONS = 200;

const SESSION_ID = /^\d{8}T\d{6}Z-[0-9a-f]{8}$/;

export interface TranscriptLocation {
  sessionId: string;
  /** First seq of the document (inclusive). */
  startSeq: number;
  /** Last seq of the document (inclusive). */
  endSeq: number;
  /** The workspace folder URI requests are sent with; none: the server's first folder. */
  workspaceUri?: string;
  /** The fact whose evidence this is, if any. */
  factId?: number;
}

export function isSessionId(text: string): boolean {
  return SESSION_ID.test(text);
}

export function transcriptUri(location: TranscriptLocation): vscode.Uri {
  const query = new URLSearchParams();
  if (location.workspaceUri !== undefined) {
    query.set("workspace", location.workspaceUri);
  }
  query.set("start", String(location.startSeq));
  query.set("end", String(location.endSeq));
  if (location.factId !== undefined) {
    query.set("fact", String(location.factId));
  }
  return vscode.Uri.from({ scheme: TRANSCRIPT_SCHEME, path: `/${location.sessionId}.transcript`, query: query.toString() });
}

function seqParam(query: URLSearchParams, name: string): number | undefined {
  const text = query.get(name);
  return text !== null && /^\d{1,9}$/.test(text) ? Number(text) : undefined;
}

/** The location a transcript URI names, or a sentence saying what is wrong with it. */
export function parseTranscriptUri(uri: vscode.Uri): TranscriptLocation | { problem: string } {
  const match = /^\/([^/]+)\.transcript$/.exec(uri.path);
  if (uri.scheme !== TRANSCRIPT_SCHEME || match === null || !isSessionId(match[1])) {
    return { problem: `${uri.toString()} does not name a lecode session transcript` };
  }
  const query = new URLSearchParams(uri.query);
  const startSeq = seqParam(query, "start");
  const endSeq = seqParam(query, "end");
  if (startSeq === undefined || endSeq === undefined || endSeq < startSeq) {
    return { problem: `${uri.toString()} does not name a seq range (start and end)` };
  }
  const location: TranscriptLocation = { sessionId: match[1], startSeq, endSeq };
  const workspace = query.get("workspace");
  if (workspace !== null && workspace !== "") {
    location.workspaceUri = workspace;
  }
  const fact = seqParam(query, "fact");
  if (fact !== undefined) {
    location.factId = fact;
  }
  return location;
}

/**
 * The range a document shows for cited `seqs`: the cited span plus up to `context` positions on
 * each side, within the session (`records` positions, the header at seq 0, when known) and within
 * MAX_POSITIONS in all. Unknown length: no context after the cited span.
 */
export function contextRange(
  seqs: readonly number[],
  records: number | undefined,
  context = 3,
): { startSeq: number; endSeq: number } {
  const first = Math.min(...seqs);
  const last = Math.max(...seqs);
  const room = Math.max(MAX_POSITIONS - (last - first + 1), 0);
  // Seq 0 is the session header: context never reaches back to it.
  let before = Math.max(Math.min(context, first - 1), 0);
  let after = records === undefined ? 0 : Math.max(Math.min(context, records - 1 - last), 0);
  while (before + after > room) {
    if (before >= after) {
      before--;
    } else {
      after--;
    }
  }
  return { startSeq: first - before, endSeq: last + after };
}
