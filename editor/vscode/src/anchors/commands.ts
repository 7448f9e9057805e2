/**
 * Facts anchored to code, in VS Code: "Remember Selection as Fact…" (editor context menu and
 * palette), and the middleware that gives the server's anchor commands a VS Code face.
 *
 * The server publishes diagnostics, CodeLenses, hovers and code actions for anchored lines with
 * no extension code (the language client shows them). The middleware only changes three things:
 * - `lecode.anchor.show` (a CodeLens's command) opens the fact's evidence, as the Facts view's
 *   Recall does, instead of the server's one-line message;
 * - `lecode.anchor.correctSelection` (the code action "Correct fact #N…") first asks for the
 *   corrected wording, prefilled with the fact's text, then sends `lecode/facts/correctSelection`;
 * - `lecode.anchor.forget` ("Forget fact #N") asks in the same modal as the Facts view's
 *   Forget… (confirm.ts), then sends `lecode/facts/forget`: the server's own question is a
 *   notification with Forget as its main button, and names no consequences;
 * - `lecode.anchor.reanchor` ("Re-anchor fact #N here") first shows the fact beside the lines as
 *   they are now and asks whether it still holds: Still true re-anchors it
 *   (`lecode/facts/reanchor`), Correct… corrects it from those lines, Cancel does nothing;
 * - the server's `refactor.lecode.remember` code action is hidden: "Remember Selection as Fact…"
 *   is the one way to do it here, and it asks for the wording.
 */
import * as vscode from "vscode";
import type { Middleware } from "vscode-languageclient/node";
import { errorMessage, serverErrorCode } from "../common/errors";
import type { CorrectSelectionParams, FactRefParams, ReanchorParams, RecallFactResult } from "../common/protocol";
import { Commands, Requests } from "../common/protocol";
import { request } from "../common/requests";
import * as api from "../common/vscodeapi";
import { type FactDeps, forgetFact, openEvidence } from "../facts/commands";
import { sourceIs } from "../facts/status";
import { guarded } from "../notes/commands";
import { seqsPhrase } from "../sessions/transcript";
import {
  MAX_ANCHOR_LINES,
  anchorPlace,
  checkoutRoot,
  defaultWording,
  lspRange,
  relativeTo,
  selectedLines,
} from "./lines";

/** The longest wording the server takes. */
export const MAX_TEXT = 4096;
/** The kind of the server's own "Remember selection as fact" code action. */
export const REMEMBER_ACTION_KIND = "refactor.lecode.remember";

function checkText(text: string): string | undefined {
  if (text.trim() === "") {
    return "Type the fact";
  }
  return text.trim().length > MAX_TEXT ? `At most ${MAX_TEXT} characters (this is ${text.trim().length})` : undefined;
}

function linesPhrase(start: number, end: number): string {
  return start === end ? `line ${start}` : `lines ${start}-${end}`;
}

// -- Remember Selection as Fact… ---------------------------------------------------------------

/**
 * Remember the active editor's selected lines as a fact in the person's words: the input box is
 * prefilled with the wording the server would give it. Kept as it is, the wording is left to
 * the server (its own default); changed, it is sent as `text`.
 */
export async function rememberSelection(deps: FactDeps): Promise<void> {
  const editor = api.activeTextEditor();
  const document = editor?.document;
  if (editor === undefined || document === undefined || document.uri.scheme !== "file") {
    throw new Error("Select the lines to remember in a file's editor first.");
  }
  const range = lspRange(editor.selection);
  if (range.start.line === range.end.line && range.start.character === range.end.character) {
    throw new Error("Select the lines to remember first.");
  }
  const folder = api.getWorkspaceFolder(document.uri);
  if (folder === undefined) {
    throw new Error(`${document.uri.fsPath} is not inside a workspace folder, so its lines cannot be remembered.`);
  }
  const lines = selectedLines(range);
  const count = lines.end - lines.start + 1;
  if (count > MAX_ANCHOR_LINES) {
    throw new Error(`A fact anchors at most ${MAX_ANCHOR_LINES} lines; ${count} are selected.`);
  }
  const root = await checkoutRoot(folder.uri.toString());
  const rel = (root && relativeTo(root, document.uri)) ?? document.uri.path.split("/").pop() ?? "";
  const texts = Array.from({ length: count }, (_, index) => document.lineAt(lines.start + index).text);
  const [first, last] = [lines.start + 1, lines.end + 1];
  const place = `${rel}:${first === last ? first : `${first}-${last}`}`;
  const wording = defaultWording(rel, first, texts);
  const typed = await api.showInputBox({
    title: "Remember Selection as Fact",
    prompt: `The fact ${place} shows, in your words (kept as it is: the lines themselves)`,
    value: wording,
    validateInput: checkText,
  });
  if (typed === undefined || checkText(typed) !== undefined) {
    return;
  }
  const text = typed.trim();
  const result = await request(deps.sender, Requests.factsRememberSelection, {
    workspaceUri: folder.uri.toString(),
    uri: document.uri.toString(),
    range,
    ...(text === wording ? {} : { text }),
  });
  deps.refresh();
  await api.showInformationMessage(
    `Remembered fact #${result.factId}, anchored at ${anchorPlace(result.anchor)}, with session ${result.sessionId} ${seqsPhrase(result.seqs)} as its evidence.`,
  );
}

// -- the server's commands, as VS Code runs them -------------------------------------------------

function factRef(value: unknown): FactRefParams {
  if (typeof value === "object" && value !== null && typeof (value as FactRefParams).factId === "number") {
    return value as FactRefParams;
  }
  throw new Error("lecode-ls sent an anchor command without a fact");
}

function recall(deps: FactDeps, ref: FactRefParams): Promise<RecallFactResult> {
  // One character is enough: the transcript document reads every page itself.
  return request(deps.sender, Requests.factsRecall, { workspaceUri: ref.workspaceUri, factId: ref.factId, limit: 1 });
}

/** A CodeLens's `lecode.anchor.show`: open the fact's evidence, or say why there is none. */
export async function showFact(deps: FactDeps, arg: unknown): Promise<void> {
  const ref = factRef(arg);
  const answer = await recall(deps, ref);
  if (answer.status !== "valid" || !answer.source) {
    await api.showInformationMessage(`Fact #${ref.factId} (revision ${answer.revision}): ${sourceIs(answer.status)}.`);
    return;
  }
  const folderUri = ref.workspaceUri ?? api.workspaceFolders()[0]?.uri.toString() ?? "";
  await openEvidence(deps, ref.factId, answer.source, folderUri);
}

/**
 * "Correct fact #N…" on a drifted anchor: ask for the corrected wording (prefilled with the
 * fact's text), then correct the fact with the lines as they are now as its new anchor.
 */
export async function correctSelection(deps: FactDeps, arg: unknown): Promise<void> {
  const params = factRef(arg) as CorrectSelectionParams;
  if (typeof params.expectedRevision !== "number" || typeof params.uri !== "string" || typeof params.range !== "object") {
    throw new Error("lecode-ls sent a correction without its revision, file or lines");
  }
  const fact = await recall(deps, params);
  const cut = fact.factTextTruncated === true;
  const lines = selectedLines(params.range);
  const typed = await api.showInputBox({
    title: `Correct Fact #${params.factId}`,
    prompt:
      `The corrected fact (revision ${params.expectedRevision + 1}), anchored at ${linesPhrase(lines.start + 1, lines.end + 1)} as they are now` +
      (cut ? ". Its text was cut at 512 characters: type the whole fact" : ""),
    value: fact.text ?? "",
    validateInput: (text) => (cut && text === fact.text ? "The text was cut at 512 characters: type the whole fact" : checkText(text)),
  });
  if (typed === undefined || checkText(typed) !== undefined || (cut && typed === fact.text)) {
    return;
  }
  const { factId, expectedRevision, uri, range, workspaceUri, sessionId } = params;
  let result;
  try {
    result = await request(deps.sender, Requests.factsCorrectSelection, {
      workspaceUri,
      factId,
      expectedRevision,
      uri,
      range,
      ...(sessionId ? { sessionId } : {}),
      text: typed.trim(),
    });
  } catch (error) {
    if (serverErrorCode(error) === "stale_revision") {
      deps.refresh();
      throw new Error(
        `Fact #${factId} was changed since these lines were checked (${errorMessage(error)}). Try Correct again from the lines' light bulb.`,
      );
    }
    throw error;
  }
  deps.refresh();
  await api.showInformationMessage(`Fact #${result.factId} is now at revision ${result.revision}, anchored at ${anchorPlace(result.anchor)}.`);
}

/** The light bulb's "Forget fact #N": the Facts view's Forget…, its modal included. */
export async function forgetFromLine(deps: FactDeps, arg: unknown): Promise<void> {
  const ref = factRef(arg);
  const folderUri = ref.workspaceUri ?? api.workspaceFolders()[0]?.uri.toString() ?? "";
  // Revision 0: forgetFact asks the server for the fact as it is now, source included.
  await forgetFact(deps, { kind: "fact", folderUri, fact: { factId: ref.factId, revision: 0, status: "valid" } });
}

export const STILL_TRUE = "Still true";
export const CORRECT = "Correct…";
/** The most lines the re-anchor question quotes. */
const QUOTED_LINES = 12;

/** The re-anchor question's detail: the fact beside the lines as they are now. */
export function reanchorDetail(fact: RecallFactResult, lines: readonly string[]): string {
  const shown = lines.slice(0, QUOTED_LINES).join("\n");
  const more = lines.length > QUOTED_LINES ? `\n… (${lines.length - QUOTED_LINES} more lines)` : "";
  const said = fact.text ? `"${fact.text}"` : `(its text is not shown: the fact is ${fact.status})`;
  return (
    `The fact says: ${said}\n\nThe lines now:\n${shown}${more}\n\n` +
    `${STILL_TRUE}: the fact stays as it is, anchored to these lines. ${CORRECT}: write what the lines show now.`
  );
}

/**
 * "Re-anchor fact #N here" on a drifted anchor: the code it rests on changed, so the fact may be
 * wrong now. Show the fact beside the lines and ask; only "Still true" re-anchors it.
 */
export async function reanchorFromLine(deps: FactDeps, arg: unknown): Promise<void> {
  const params = factRef(arg) as ReanchorParams;
  if (typeof params.expectedRevision !== "number" || typeof params.uri !== "string" || typeof params.range !== "object") {
    throw new Error("lecode-ls sent a re-anchor without its revision, file or lines");
  }
  const fact = await recall(deps, params);
  const document = await api.openTextDocument(vscode.Uri.parse(params.uri));
  const lines = selectedLines(params.range);
  const texts = Array.from({ length: lines.end - lines.start + 1 }, (_, i) =>
    lines.start + i < document.lineCount ? document.lineAt(lines.start + i).text : "",
  );
  const where = `${document.uri.path.split("/").pop() ?? ""} ${linesPhrase(lines.start + 1, lines.end + 1)}`;
  // Correct… first: Enter takes the careful way (an input box, which can still be dismissed).
  const answer = await api.showWarningMessage(
    `Is fact #${params.factId} still true of ${where} as it is now?`,
    { modal: true, detail: reanchorDetail(fact, texts) },
    CORRECT,
    STILL_TRUE,
  );
  if (answer === CORRECT) {
    const { index: _index, ...selection } = params;
    await correctSelection(deps, selection);
    return;
  }
  if (answer !== STILL_TRUE) {
    return;
  }
  let result;
  try {
    result = await request(deps.sender, Requests.factsReanchor, params);
  } catch (error) {
    if (serverErrorCode(error) === "stale_revision") {
      deps.refresh();
      throw new Error(`Fact #${params.factId} was changed since these lines were checked (${errorMessage(error)}). Try again from the lines' light bulb.`);
    }
    throw error;
  }
  deps.refresh();
  await api.showInformationMessage(`Fact #${result.factId} (revision ${result.revision}) is anchored at ${anchorPlace(result.anchor)} now.`);
}

type Action = vscode.Command | vscode.CodeAction;

/** Whether an action is the server's "Remember selection as fact" (hidden in VS Code). */
export function isRememberAction(action: Action): boolean {
  if (typeof action.command === "string") {
    return action.command === Commands.anchorRememberSelection;
  }
  const kind = (action as vscode.CodeAction).kind?.value;
  return kind === REMEMBER_ACTION_KIND || action.command?.command === Commands.anchorRememberSelection;
}

/** The language client's middleware for anchors (see the module's comment). */
export function anchorMiddleware(deps: FactDeps): Middleware {
  return {
    executeCommand: async (command, args, next) => {
      switch (command) {
        case Commands.anchorShow:
          return guarded(() => showFact(deps, args[0]))();
        case Commands.anchorCorrectSelection:
          return guarded(() => correctSelection(deps, args[0]))();
        case Commands.anchorForget:
          return guarded(() => forgetFromLine(deps, args[0]))();
        case Commands.anchorReanchor:
          return guarded(() => reanchorFromLine(deps, args[0]))();
        default:
          return next(command, args);
      }
    },
    provideCodeActions: async (document, range, context, token, next) => {
      const actions = await next(document, range, context, token);
      return actions?.filter((action) => !isRememberAction(action));
    },
  };
}

/** The extension's own anchor command, by id; extension.ts registers it. */
export function anchorCommands(deps: FactDeps): Record<string, (arg?: unknown) => Promise<void>> {
  return {
    "lecode.rememberSelection": guarded(() => rememberSelection(deps)),
  };
}
