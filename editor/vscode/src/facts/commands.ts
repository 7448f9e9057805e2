/**
 * The fact commands: Recall, Correct…, Forget… and Go to Source on nodes of the Facts tree, and
 * the palette commands Remember From Session… and Import Session…. (Sharing with the team is
 * team.ts's; Forget… on a shared fact offers its Stop Sharing Too.)
 *
 * Evidence is always captured by the server (`lecode/session/snapshot`) from a session range the
 * user names; nothing guesses it. Failures are shown as the server's sentence (see `guarded`).
 */
import * as vscode from "vscode";
import { openAnchor } from "../anchors/open";
import { errorMessage, serverErrorCode } from "../common/errors";
import type { FactEntry, SessionInfoModel, SourceRefModel } from "../common/protocol";
import { Requests } from "../common/protocol";
import { type RequestSender, request } from "../common/requests";
import { confirmDestructive } from "../common/confirm";
import * as api from "../common/vscodeapi";
import { CANCELLED, type ProjectSource, chooseFolder, guarded } from "../notes/commands";
import { workspaceParams } from "../notes/uri";
import { seqsPhrase } from "../sessions/transcript";
import type { LineRange } from "../sessions/transcript";
import { MAX_POSITIONS, contextRange, transcriptUri } from "../sessions/uri";
import type { FactNode } from "../views/nodes";
import { type ProjectFileClaim, claimUri, findLine, parseProjectFileFact } from "./projectFile";
import { sourceIs } from "./status";
import { offerStopSharing } from "./team";

/** What the transcript documents know about what they show (the TranscriptProvider). */
export interface TranscriptLines {
  linesOf(uri: vscode.Uri, seqs?: readonly number[]): LineRange | undefined;
  problemOf(uri: vscode.Uri): string | undefined;
}

export interface FactDeps {
  sender: RequestSender;
  projects: ProjectSource;
  transcripts: TranscriptLines;
  /** Redraw the Facts tree. */
  refresh(): void;
  /** Show more facts of a project (the "more…" node). */
  showMore(folderUri: string): void;
}

/** A node that stands for one fact: the fact itself, its source, its project file or an anchor. */
export type FactRef = Extract<FactNode, { fact: FactEntry }>;

function asFactRef(value: unknown): FactRef {
  if (typeof value === "object" && value !== null && "kind" in value && "fact" in value) {
    return value as FactRef;
  }
  throw new Error('Run this command on a fact in the "Facts" view.');
}

// -- navigation ------------------------------------------------------------------------------

/** The number of records of a session (its next seq), if the server lists it. */
async function sessionRecords(sender: RequestSender, folderUri: string, sessionId: string): Promise<number | undefined> {
  try {
    const { sessions } = await request(sender, Requests.sessionList, { workspaceUri: folderUri });
    return sessions.find((session) => session.sessionId === sessionId)?.records;
  } catch {
    return undefined; // the document is still shown, without context after the cited records
  }
}

/**
 * Open evidence as a transcript document (its cited records with a few records of context on
 * each side) and select the cited records. With `factId` (a fact's evidence) the document
 * recalls the fact and selects what it cites now; without (a proposal's), `source`'s seqs.
 */
export async function openEvidence(
  deps: FactDeps,
  factId: number | undefined,
  source: SourceRefModel,
  folderUri: string,
): Promise<vscode.Uri> {
  const records = await sessionRecords(deps.sender, folderUri, source.sessionId);
  const uri = transcriptUri({ sessionId: source.sessionId, ...contextRange(source.seqs, records), workspaceUri: folderUri, factId });
  const document = await api.openTextDocument(uri);
  await api.showLines(document, deps.transcripts.linesOf(uri, factId === undefined ? source.seqs : undefined));
  const problem = deps.transcripts.problemOf(uri);
  if (problem !== undefined) {
    await api.showInformationMessage(`${problem}.`);
  }
  return uri;
}

/** Open the file a verified project fact names and select the first line equal to the claim. */
export async function openProjectFile(claim: ProjectFileClaim, folderUri: string): Promise<void> {
  if (!claim.ok) {
    await api.showErrorMessage(claim.problem);
    return;
  }
  let document: vscode.TextDocument;
  try {
    document = await api.openTextDocument(claimUri(folderUri, claim));
  } catch (error) {
    throw new Error(`${claim.path} could not be opened: ${errorMessage(error)}`);
  }
  const line = findLine(document.getText(), claim.line);
  await api.showLines(document, line === undefined ? undefined : { start: line, end: line });
  if (line === undefined) {
    await api.showInformationMessage(`the line is no longer in ${claim.path}`);
  }
}

/**
 * What a click on a node opens: a verified project fact's file, a fact's (or a source node's)
 * transcript, a project file node's file, an anchor's file at its lines.
 */
export async function goToSource(deps: FactDeps, node: FactRef): Promise<void> {
  const { fact, folderUri } = node;
  if (node.kind === "anchor") {
    await openAnchor(node.anchor, folderUri);
    return;
  }
  if (node.kind === "file") {
    await openProjectFile(node.claim, folderUri);
    return;
  }
  if (node.kind === "fact") {
    const claim = fact.text ? parseProjectFileFact(fact.text) : undefined;
    if (claim !== undefined) {
      await openProjectFile(claim, folderUri);
      return;
    }
  }
  if (fact.source) {
    await openEvidence(deps, fact.factId, fact.source, folderUri);
    return;
  }
  await api.showInformationMessage(`Fact #${fact.factId}: ${sourceIs(fact.status)}.`);
}

// -- recall ----------------------------------------------------------------------------------

/** Recall the fact now; when valid open its evidence, otherwise say what its status is. */
export async function recallFact(deps: FactDeps, node: FactRef): Promise<void> {
  const { fact, folderUri } = node;
  // One character is enough: the document reads every page itself.
  const answer = await request(deps.sender, Requests.factsRecall, { workspaceUri: folderUri, factId: fact.factId, limit: 1 });
  if (answer.status !== fact.status || answer.revision !== fact.revision) {
    deps.refresh();
  }
  if (answer.status !== "valid" || !answer.source) {
    await api.showInformationMessage(`Fact #${fact.factId} (revision ${answer.revision}): ${sourceIs(answer.status)}.`);
    return;
  }
  await openEvidence(deps, fact.factId, answer.source, folderUri);
}

// -- evidence from a session range -----------------------------------------------------------

export interface SeqRange {
  startSeq: number;
  endSeq: number;
}

/**
 * `3`, `3-5`, `3..5` or `3–5` as an inclusive range, or what is wrong with it. `records` is the
 * session's length (seq 0 is its header, so messages are 1..records-1).
 */
export function parseSeqRange(text: string, records?: number): SeqRange | string {
  const match = /^\s*(\d+)\s*(?:(?:-|–|\.\.|to|\s)\s*(\d+))?\s*$/.exec(text);
  if (match === null) {
    return "Type a seq or a range of seqs, e.g. 3 or 3-5";
  }
  const startSeq = Number(match[1]);
  const endSeq = match[2] === undefined ? startSeq : Number(match[2]);
  if (startSeq < 1) {
    return "Seq 0 is the session's header; messages start at seq 1";
  }
  if (endSeq < startSeq) {
    return `The range ends (${endSeq}) before it starts (${startSeq})`;
  }
  if (records !== undefined && endSeq > records - 1) {
    return `The session's last seq is ${records - 1}`;
  }
  if (endSeq - startSeq + 1 > MAX_POSITIONS) {
    return `Evidence covers at most ${MAX_POSITIONS} positions; ${startSeq}-${endSeq} covers ${endSeq - startSeq + 1}`;
  }
  return { startSeq, endSeq };
}

interface SessionPick extends vscode.QuickPickItem {
  session: SessionInfoModel;
}

/** The session quick pick: newest first, the current evidence's session at the top. */
export function sessionPicks(sessions: readonly SessionInfoModel[], current?: string): SessionPick[] {
  const picks = [...sessions].reverse().map(
    (session): SessionPick => ({
      label: session.title.trim() === "" ? session.sessionId : session.title,
      description: [
        session.title.trim() === "" ? undefined : session.sessionId,
        session.sessionId === current ? "current evidence" : undefined,
        session.corrupt ? "damaged" : undefined,
      ]
        .filter(Boolean)
        .join(" · "),
      detail: `${session.records - 1} records after the header, created ${session.created}`,
      session,
    }),
  );
  const index = picks.findIndex((pick) => pick.session.sessionId === current);
  if (index > 0) {
    picks.unshift(...picks.splice(index, 1));
  }
  return picks;
}

export interface EvidenceRange extends SeqRange {
  sessionId: string;
}

/**
 * Ask for evidence: a session of the project, then a seq range in it (prefilled with `current`,
 * the evidence the fact cites now). Undefined when the user dismissed a prompt.
 */
export async function askEvidence(
  deps: FactDeps,
  folderUri: string | undefined,
  current?: SourceRefModel,
): Promise<EvidenceRange | undefined> {
  const { sessions } = await request(deps.sender, Requests.sessionList, workspaceParams(folderUri));
  if (sessions.length === 0) {
    throw new Error('This project has no sessions yet; import one with "lecode: Import Session…".');
  }
  const picked = await api.showQuickPick(sessionPicks(sessions, current?.sessionId), {
    placeHolder: "Which session holds the evidence?",
    matchOnDescription: true,
  });
  if (picked === undefined) {
    return undefined;
  }
  const { sessionId, records } = picked.session;
  const sameSession = current !== undefined && current.sessionId === sessionId && current.seqs.length > 0;
  const value = sameSession ? `${current.seqs[0]}-${current.seqs[current.seqs.length - 1]}` : "";
  const typed = await api.showInputBox({
    prompt: `Seqs of the evidence in ${sessionId} (messages are seqs 1 to ${records - 1}), e.g. 3 or 3-5`,
    value,
    validateInput: (text) => {
      const range = parseSeqRange(text, records);
      return typeof range === "string" ? range : undefined;
    },
  });
  if (typed === undefined) {
    return undefined;
  }
  const range = parseSeqRange(typed, records);
  if (typeof range === "string") {
    throw new Error(range);
  }
  return { sessionId, ...range };
}

/** Capture evidence through the server: the visible messages of the range and their digest. */
function snapshot(deps: FactDeps, folderUri: string | undefined, range: EvidenceRange): Promise<SourceRefModel> {
  return request(deps.sender, Requests.sessionSnapshot, { ...workspaceParams(folderUri), ...range });
}

function rangePhrase(range: SeqRange): string {
  return range.startSeq === range.endSeq ? `seq ${range.startSeq}` : `seqs ${range.startSeq}–${range.endSeq}`;
}

const notEmpty = (text: string): string | undefined => (text.trim() === "" ? "Type the fact" : undefined);

// -- correct ---------------------------------------------------------------------------------

/**
 * Correct a fact: new text and new evidence (snapshot), appended as a revision if the fact is
 * still at the revision the tree showed.
 */
export async function correctFact(deps: FactDeps, node: FactRef): Promise<void> {
  const { fact, folderUri } = node;
  const text = await api.showInputBox({
    prompt: `Corrected text of fact #${fact.factId} (it becomes revision ${fact.revision + 1})`,
    value: fact.text ?? "",
    validateInput: notEmpty,
  });
  if (text === undefined || text.trim() === "") {
    return;
  }
  const range = await askEvidence(deps, folderUri, fact.source ?? undefined);
  if (range === undefined) {
    return;
  }
  const source = await snapshot(deps, folderUri, range);
  let result;
  try {
    result = await request(deps.sender, Requests.factsCorrect, {
      workspaceUri: folderUri,
      factId: fact.factId,
      expectedRevision: fact.revision,
      text: text.trim(),
      source,
    });
  } catch (error) {
    if (serverErrorCode(error) === "stale_revision") {
      deps.refresh();
      throw new Error(
        `Fact #${fact.factId} was changed since the Facts view showed revision ${fact.revision} (${errorMessage(error)}). ` +
          "Refresh the Facts view, then correct the fact again.",
      );
    }
    throw error;
  }
  deps.refresh();
  await api.showInformationMessage(`Fact #${result.factId} is now at revision ${result.revision}.`);
}

// -- forget ----------------------------------------------------------------------------------

/** "fact #2", "facts #2 and #5", "facts #2, #5 and #9". */
function factList(ids: readonly number[]): string {
  const names = ids.map((id) => `#${id}`);
  const joined = names.length === 1 ? names[0] : `${names.slice(0, -1).join(", ")} and ${names.at(-1)}`;
  return `${ids.length === 1 ? "fact" : "facts"} ${joined}`;
}

/**
 * The modal question before a forget: exactly what is deleted, what is excluded for good, and
 * every other fact the forget hides (`hides`, from the server's dry run).
 */
export function forgetConfirmation(fact: FactEntry, hides: readonly number[] = []): string {
  const question = forgetQuestion(fact);
  if (hides.length === 0) {
    return question;
  }
  const cite = hides.length === 1 ? "it cites" : "they cite";
  return `${question} This also hides ${factList(hides)} from recall and chat: ${cite} the same evidence.`;
}

function forgetQuestion(fact: FactEntry): string {
  const count = fact.revision;
  const question = `Forget fact #${fact.factId}? Its ${count} revision${count === 1 ? " is" : "s are"} deleted and`;
  const never = "can never be used as evidence again.";
  if (!fact.source) {
    return `${question} every transcript position ${count === 1 ? "it cites" : "they cite"} ${never}`;
  }
  const positions = `transcript positions ${fact.source.sessionId} ${seqsPhrase(fact.source.seqs)}`;
  if (count === 1) {
    return `${question} ${positions} ${never}`;
  }
  const earlier = count === 2 ? "its earlier revision cites" : `its ${count - 1} earlier revisions cite`;
  return `${question} ${positions}, with every position ${earlier}, ${never}`;
}

export const FORGET = "Forget";

/**
 * Forget a fact after the modal confirmation (confirm.ts), from the Facts view or a drifted
 * line's light bulb: it says what is deleted, what can never be evidence again and every other
 * fact the forget hides (the server's dry run), and Enter keeps the fact.
 */
export async function forgetFact(deps: FactDeps, node: FactRef): Promise<void> {
  const { folderUri } = node;
  // Ask about the fact as it is now: its revision may have moved on since the tree was drawn.
  const now = await request(deps.sender, Requests.factsRecall, { workspaceUri: folderUri, factId: node.fact.factId, limit: 1 });
  const fact: FactEntry = {
    ...node.fact,
    revision: now.revision,
    status: now.status,
    text: now.text ?? undefined,
    // A source that no longer validates is not sent, but the tree's is still the one its
    // revision cites when the revision is the same.
    source: now.source ?? (now.revision === node.fact.revision ? node.fact.source : undefined),
  };
  const dry = await request(deps.sender, Requests.factsForget, { workspaceUri: folderUri, factId: fact.factId, dryRun: true });
  const text = fact.text ? `"${fact.text}"` : `(${fact.status}: its text is not shown)`;
  if (!(await confirmDestructive(forgetConfirmation(fact, dry.hides ?? []), `The fact: ${text}.`, FORGET))) {
    return;
  }
  const result = await request(deps.sender, Requests.factsForget, { workspaceUri: folderUri, factId: fact.factId });
  deps.refresh();
  const hidden = result.hides ?? [];
  const list = factList(hidden);
  const also = hidden.length > 0 ? ` ${list[0].toUpperCase()}${list.slice(1)} ${hidden.length === 1 ? "is" : "are"} now hidden.` : "";
  const said = result.forgotten ? `Fact #${fact.factId} was forgotten.${also}` : `Fact #${fact.factId} had already been forgotten.`;
  // The team's copy is a file of the checkout that the forget leaves: offer to remove it too.
  const { shared } = node.fact;
  await (shared ? offerStopSharing(deps, folderUri, shared, said) : api.showInformationMessage(said));
}

// -- palette commands ------------------------------------------------------------------------

/** Remember a fact: a session range as its evidence (snapshot), then its text. */
export async function rememberFromSession(deps: FactDeps): Promise<void> {
  const folder = await chooseFolder(deps);
  if (folder === CANCELLED) {
    return;
  }
  const range = await askEvidence(deps, folder);
  if (range === undefined) {
    return;
  }
  const text = await api.showInputBox({
    prompt: `The fact that ${range.sessionId} ${rangePhrase(range)} supports`,
    placeHolder: "We use tabs for indentation in this repo.",
    validateInput: notEmpty,
  });
  if (text === undefined || text.trim() === "") {
    return;
  }
  const source = await snapshot(deps, folder, range);
  const result = await request(deps.sender, Requests.factsRemember, { ...workspaceParams(folder), text: text.trim(), source });
  deps.refresh();
  await api.showInformationMessage(
    `Remembered fact #${result.factId}, with ${source.sessionId} ${seqsPhrase(source.seqs)} as its evidence.`,
  );
}

/** Import a JSONL transcript of the workspace as a new session. */
export async function importSession(deps: FactDeps): Promise<void> {
  const folder = await chooseFolder(deps);
  if (folder === CANCELLED) {
    return;
  }
  const folderUri = folder ?? api.workspaceFolders()[0]?.uri.toString();
  const picked = await api.showOpenDialog({
    canSelectFiles: true,
    canSelectFolders: false,
    canSelectMany: false,
    defaultUri: folderUri === undefined ? undefined : vscode.Uri.parse(folderUri),
    filters: { "JSONL transcripts": ["jsonl"], "All files": ["*"] },
    openLabel: "Import",
    title: "Import a session: OpenAI-style messages or an exported lecode-ls transcript (JSONL)",
  });
  const file = picked?.[0];
  if (file === undefined) {
    return;
  }
  if (file.scheme !== "file") {
    throw new Error(`${file.toString()} is not a local file; only a JSONL file inside a workspace folder can be imported`);
  }
  const name = file.path.split("/").pop() ?? "";
  const result = await request(deps.sender, Requests.sessionImport, {
    ...workspaceParams(folder),
    path: file.fsPath,
    title: name.replace(/\.jsonl$/i, ""),
  });
  const renamed =
    result.renamedFrom === null
      ? ""
      : ` (its own ID ${result.renamedFrom} was taken, so it got a new one; ` +
        `facts that cite ${result.renamedFrom} keep citing that session)`;
  await api.showInformationMessage(`Imported ${name} as session ${result.sessionId}${renamed}.`);
}

// -- registration ----------------------------------------------------------------------------

function moreArg(value: unknown): string {
  if (typeof value === "object" && value !== null && (value as FactNode).kind === "more") {
    return (value as Extract<FactNode, { kind: "more" }>).folderUri;
  }
  throw new Error('Run this command on the "more…" node of the "Facts" view.');
}

/** A command on a fact node; a fact that is gone (forgotten elsewhere) also redraws the tree. */
/** Pin or unpin a fact (the Facts view's toggle): the server injects pinned facts first. */
export async function setPinned(deps: FactDeps, node: FactRef, pinned: boolean): Promise<void> {
  const method = pinned ? Requests.factsPin : Requests.factsUnpin;
  await request(deps.sender, method, { workspaceUri: node.folderUri, factId: node.fact.factId });
  deps.refresh();
}

function onFact(deps: FactDeps, body: (deps: FactDeps, node: FactRef) => Promise<void>): (arg?: unknown) => Promise<void> {
  return guarded(async (arg?: unknown) => {
    try {
      await body(deps, asFactRef(arg));
    } catch (error) {
      if (serverErrorCode(error) === "fact_not_found") {
        deps.refresh();
      }
      throw error;
    }
  });
}

/** The fact commands, by id; extension.ts registers them. */
export function factCommands(deps: FactDeps): Record<string, (arg?: unknown) => Promise<void>> {
  return {
    "lecode.recallFact": onFact(deps, recallFact),
    "lecode.correctFact": onFact(deps, correctFact),
    "lecode.forgetFact": onFact(deps, forgetFact),
    "lecode.pinFact": onFact(deps, (d, node) => setPinned(d, node, true)),
    "lecode.unpinFact": onFact(deps, (d, node) => setPinned(d, node, false)),
    "lecode.openFactSource": onFact(deps, goToSource),
    "lecode.showMoreFacts": guarded(async (arg?: unknown) => deps.showMore(moreArg(arg))),
    "lecode.rememberFromSession": guarded(() => rememberFromSession(deps)),
    "lecode.importSession": guarded(() => importSession(deps)),
  };
}
