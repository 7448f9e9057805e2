/**
 * The read-only `lecode-transcript:` documents: a session range (and, for a fact, the fact) as
 * readable text, read through the server.
 *
 * A document's content comes from `lecode/session/read` over its range (every page, the source
 * digest compared across pages, the pages' `sourceText` joined and parsed). A fact's document
 * first recalls the fact (`lecode/facts/recall`, the durable check) and shows its text; if the
 * surrounding range cannot be read as it is (cleared, partly hidden), it shows the cited records
 * the recall returned. A source that is not valid is shown as "the source is <status>" instead
 * of content. The provider keeps each document's seq -> lines map for selecting cited records.
 */
import * as vscode from "vscode";
import { errorMessage } from "../common/errors";
import type { RecallFactResult, RecallSessionResult, SourceRefModel } from "../common/protocol";
import { Requests } from "../common/protocol";
import { type RequestSender, request } from "../common/requests";
import { type Status, sourceIs } from "../facts/status";
import { workspaceParams } from "../notes/uri";
import {
  type LineRange,
  type RenderedTranscript,
  UNTRUSTED_NOTICE,
  formatSeqs,
  linesOfSeqs,
  renderTranscript,
  seqsPhrase,
} from "./transcript";
import { type TranscriptLocation, parseTranscriptUri } from "./uri";

/** Page size asked for (the server's largest). */
const PAGE = 8192;
/** The most characters of evidence one document shows. */
export const MAX_SOURCE_CHARS = 2_000_000;

/** How many documents the provider keeps line maps of (and refreshes). */
const MAX_DOCUMENTS = 100;

/** What a transcript document shows. */
export interface TranscriptDocument {
  text: string;
  /** Where each record is (absent when no record is shown). */
  rendered?: RenderedTranscript;
  /** The seqs the fact cites (for a fact's document). */
  cited: number[];
  /** Why no record is shown, as a sentence. */
  problem?: string;
}

interface Page {
  status: Status;
  source?: SourceRefModel | null;
  sourceText?: string | null;
  nextOffset?: number | null;
}

interface Evidence<P extends Page> {
  first: P;
  /** The parsed records; undefined when the status is not valid. */
  records?: unknown[];
  status: Status;
}

/** Every page from offset 0, joined and parsed; stops at the first page that is not valid. */
export async function readPages<P extends Page>(fetch: (offset: number) => Promise<P>): Promise<Evidence<P>> {
  let offset = 0;
  let text = "";
  let first: P | undefined;
  for (;;) {
    const page = await fetch(offset);
    first ??= page;
    if (page.status !== "valid") {
      return { first, status: page.status };
    }
    if (first.source?.digest !== page.source?.digest) {
      throw new Error("the transcript changed while it was being read; open it again");
    }
    text += page.sourceText ?? "";
    if (text.length > MAX_SOURCE_CHARS) {
      throw new Error(`the evidence is longer than ${MAX_SOURCE_CHARS.toLocaleString("en-US")} characters, too long to show here`);
    }
    const next = page.nextOffset;
    if (next === undefined || next === null) {
      break;
    }
    if (next <= offset) {
      throw new Error("the server's pages of evidence do not advance");
    }
    offset = next;
  }
  let records: unknown;
  try {
    records = JSON.parse(text === "" ? "[]" : text);
  } catch {
    records = undefined;
  }
  if (!Array.isArray(records)) {
    throw new Error("the server's evidence is not a JSON array of records");
  }
  return { first, status: "valid", records };
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

function seqOf(record: unknown): number | undefined {
  const seq = typeof record === "object" && record !== null ? (record as { seq?: unknown }).seq : undefined;
  return typeof seq === "number" ? seq : undefined;
}

/** Build the document a transcript location shows. Failures become its text, never a throw. */
export async function loadTranscript(sender: RequestSender, location: TranscriptLocation): Promise<TranscriptDocument> {
  const workspace = workspaceParams(location.workspaceUri);
  const header = [UNTRUSTED_NOTICE];
  const range = `seqs ${location.startSeq}–${location.endSeq}`;
  const failed = (cited: number[], problem: string): TranscriptDocument => ({
    text: [...header, "", `${problem}.`, ""].join("\n"),
    cited,
    problem,
  });

  let fact: Evidence<RecallFactResult> | undefined;
  if (location.factId !== undefined) {
    const factId = location.factId;
    try {
      fact = await readPages((offset) => request(sender, Requests.factsRecall, { ...workspace, factId, offset, limit: PAGE }));
    } catch (error) {
      return failed([], `fact #${factId} could not be recalled: ${errorMessage(error)}`);
    }
    if (fact.status !== "valid") {
      return failed([], `fact #${factId}: ${sourceIs(fact.status)}`);
    }
    const truncated = fact.first.factTextTruncated ? " (cut at 512 characters)" : "";
    header.push(`Fact #${factId}, revision ${fact.first.revision}: ${oneLine(fact.first.text ?? "")}${truncated}`);
  }
  const cited = fact?.first.source?.seqs ?? [];
  const citedSession = fact?.first.source?.sessionId ?? location.sessionId;
  if (fact?.records !== undefined && citedSession !== location.sessionId) {
    // The fact was corrected to cite another session since this document was opened.
    header.push(`Session ${citedSession}, ${seqsPhrase(cited)}: the fact now cites this session; only its cited records are shown.`);
    const rendered = renderTranscript(header, fact.records, new Set(cited));
    return { text: rendered.text, rendered, cited };
  }
  header.push(
    `Session ${location.sessionId}, ${range}${cited.length > 0 ? `; the fact cites ${formatSeqs(cited)} (marked "cited")` : ""}`,
  );

  let session: Evidence<RecallSessionResult> | undefined;
  let sessionProblem: string | undefined;
  try {
    session = await readPages((offset) =>
      request(sender, Requests.sessionRead, {
        ...workspace,
        sessionId: location.sessionId,
        startSeq: location.startSeq,
        endSeq: location.endSeq,
        offset,
        limit: PAGE,
      }),
    );
    if (session.status !== "valid") {
      sessionProblem = sourceIs(session.status);
    }
  } catch (error) {
    sessionProblem = errorMessage(error);
  }

  const shown = new Set((session?.records ?? []).map(seqOf));
  if (session?.records !== undefined && cited.every((seq) => shown.has(seq))) {
    const rendered = renderTranscript(header, session.records, new Set(cited));
    return { text: rendered.text, rendered, cited };
  }
  if (fact?.records !== undefined) {
    // The fact's own evidence validates (durable) even where the range around it cannot be read
    // as working context (for example after /clear): show the cited records alone.
    header.push(`Only the cited records are shown: for ${range}, ${sessionProblem ?? "some cited records are not visible"}.`);
    const rendered = renderTranscript(header, fact.records, new Set(cited));
    return { text: rendered.text, rendered, cited };
  }
  return failed(cited, sessionProblem ?? sourceIs("missing"));
}

/** The TextDocumentContentProvider of the `lecode-transcript` scheme. */
export class TranscriptProvider implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;
  /**
   * What the last content of each document VS Code asked for holds (its line map, not its text),
   * by URI string, the most recently shown last; at most MAX_DOCUMENTS.
   */
  private readonly documents = new Map<string, { uri: vscode.Uri; document: Omit<TranscriptDocument, "text"> }>();

  constructor(private readonly sender: RequestSender) {}

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const location = parseTranscriptUri(uri);
    const document =
      "problem" in location
        ? { text: `${location.problem}.\n`, cited: [], problem: location.problem }
        : await loadTranscript(this.sender, location);
    const { text, ...kept } = document;
    const key = uri.toString();
    this.documents.delete(key);
    this.documents.set(key, { uri, document: kept });
    for (const old of this.documents.keys()) {
      if (this.documents.size <= MAX_DOCUMENTS) {
        break;
      }
      this.documents.delete(old);
    }
    return text;
  }

  /** The lines of `seqs` in the document last shown for `uri` (default: the cited seqs). */
  linesOf(uri: vscode.Uri, seqs?: readonly number[]): LineRange | undefined {
    const entry = this.documents.get(uri.toString());
    if (entry?.document.rendered === undefined) {
      return undefined;
    }
    return linesOfSeqs(entry.document.rendered, seqs ?? entry.document.cited);
  }

  /** Why the document last shown for `uri` has no records, if it has none. */
  problemOf(uri: vscode.Uri): string | undefined {
    return this.documents.get(uri.toString())?.document.problem;
  }

  /** Facts or sessions changed: every open transcript document is read again. */
  refresh(): void {
    for (const { uri } of this.documents.values()) {
      this.changed.fire(uri);
    }
  }

  dispose(): void {
    this.changed.dispose();
    this.documents.clear();
  }
}
