/**
 * The read-only `lecode-team:` documents: a fact shared with the team (a `.lecode/facts/` file of
 * the checkout) recalled through the server, with the transcript records bundled in its file.
 *
 * `lecode-team:/<teamId>.team?workspace=<folder URI>`: the path names the shared fact (so the
 * editor tab shows it), the query the workspace folder the requests go through. The content comes
 * from `lecode/facts/teamRecall`, every page of `sourceText` joined and parsed (readPages, as a
 * fact's transcript document does), and is rendered like a transcript with every record cited.
 * A fact that is not valid is shown as its status and the server's reason instead of records.
 * Everything in a shared file was written by someone else: it is shown, never interpreted.
 */
import * as vscode from "vscode";
import { errorMessage } from "../common/errors";
import type { TeamRecallResult } from "../common/protocol";
import { Requests } from "../common/protocol";
import { type RequestSender, request } from "../common/requests";
import { workspaceParams } from "../notes/uri";
import { UNTRUSTED_NOTICE, renderTranscript, seqsPhrase } from "../sessions/transcript";
import { readPages } from "../sessions/transcriptProvider";

export const TEAM_SCHEME = "lecode-team";

/** A shared fact's ID: 20 hex digits (protocol.md, TeamFactEntry.teamId). */
const TEAM_ID = /^[0-9a-f]{20}$/;

/** Page size asked for (the server's largest). */
const PAGE = 8192;

/** How many documents the provider remembers (to show them again when team facts change). */
const MAX_DOCUMENTS = 100;

export interface TeamLocation {
  teamId: string;
  /** The workspace folder URI requests are sent with; none: the server's first folder. */
  workspaceUri?: string;
}

export function teamUri(location: TeamLocation): vscode.Uri {
  const query = new URLSearchParams();
  if (location.workspaceUri !== undefined) {
    query.set("workspace", location.workspaceUri);
  }
  return vscode.Uri.from({ scheme: TEAM_SCHEME, path: `/${location.teamId}.team`, query: query.toString() });
}

/** The shared fact a team URI names, or a sentence saying what is wrong with it. */
export function parseTeamUri(uri: vscode.Uri): TeamLocation | { problem: string } {
  const match = /^\/([^/]+)\.team$/.exec(uri.path);
  if (uri.scheme !== TEAM_SCHEME || match === null || !TEAM_ID.test(match[1])) {
    return { problem: `${uri.toString()} does not name a fact shared with the team` };
  }
  const workspace = new URLSearchParams(uri.query).get("workspace");
  return workspace === null || workspace === "" ? { teamId: match[1] } : { teamId: match[1], workspaceUri: workspace };
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

/** `Shared by Ada on 2026-12-02T17:00:00Z in .lecode/facts/….json`, with what the file says. */
export function sharedPhrase(answer: Pick<TeamRecallResult, "sharedBy" | "sharedAt" | "file">): string {
  const by = answer.sharedBy ? ` by ${oneLine(answer.sharedBy)}` : "";
  const at = answer.sharedAt ? ` on ${answer.sharedAt}` : "";
  return `Shared${by}${at} in ${answer.file}`;
}

/** The text of a shared fact's document. Failures become its text, never a throw. */
export async function loadTeamFact(sender: RequestSender, location: TeamLocation): Promise<string> {
  const { teamId } = location;
  const header = [UNTRUSTED_NOTICE];
  let evidence;
  try {
    evidence = await readPages((offset) =>
      request(sender, Requests.factsTeamRecall, { ...workspaceParams(location.workspaceUri), teamId, offset, limit: PAGE }),
    );
  } catch (error) {
    return [...header, "", `Shared fact ${teamId} could not be recalled: ${errorMessage(error)}.`, ""].join("\n");
  }
  const { first } = evidence;
  header.push(`${sharedPhrase(first)} (team fact ${teamId}${first.revision ? `, revision ${first.revision}` : ""})`);
  if (first.text) {
    header.push(`Fact: ${oneLine(first.text)}${first.factTextTruncated ? " (cut at 512 characters)" : ""}`);
  }
  if (evidence.records === undefined) {
    const reason = first.reason ? `: ${first.reason}` : "";
    return [...header, "", `It is ${first.status}${reason}. No evidence is shown.`, ""].join("\n");
  }
  if (first.source) {
    header.push(`Evidence bundled in the file: session ${first.source.sessionId} (the sharer's), ${seqsPhrase(first.source.seqs)}`);
  }
  // The bundle holds exactly the records the fact cites: each is marked cited.
  const cited = new Set(first.source?.seqs ?? []);
  return renderTranscript(header, evidence.records, cited).text;
}

/** The TextDocumentContentProvider of the `lecode-team` scheme. */
export class TeamDocumentProvider implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;
  /** The documents VS Code asked for, by URI string, the most recently shown last. */
  private readonly documents = new Map<string, vscode.Uri>();

  constructor(private readonly sender: RequestSender) {}

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const key = uri.toString();
    this.documents.delete(key);
    this.documents.set(key, uri);
    for (const old of this.documents.keys()) {
      if (this.documents.size <= MAX_DOCUMENTS) {
        break;
      }
      this.documents.delete(old);
    }
    const location = parseTeamUri(uri);
    return "problem" in location ? `${location.problem}.\n` : loadTeamFact(this.sender, location);
  }

  /** Team facts changed (a pull, a branch switch, a share): every open document is read again. */
  refresh(): void {
    for (const uri of this.documents.values()) {
      this.changed.fire(uri);
    }
  }

  dispose(): void {
    this.changed.dispose();
    this.documents.clear();
  }
}
