/**
 * The messages between the chat page (the webview) and the extension host.
 *
 * The page is untrusted: it shows model text and tool output, so anything it posts is checked
 * here before the host acts on it. `parsePageMessage` accepts exactly the shapes below (no extra
 * fields, bounded strings) and returns undefined for anything else, which the host ignores.
 */
import { fileKind } from "../notes/names";
import type { SetupMessage, SetupView } from "./setup";
import type { Entry } from "./turn";

/** The longest message the page may send (characters). */
export const MAX_TEXT = 100_000;
/** The longest code block the page may ask to copy or insert (characters). */
export const MAX_CODE = 1_000_000;

/** A session ID exactly as the server makes them: `YYYYMMDDTHHMMSSZ-xxxxxxxx`. */
const SESSION_ID = /^\d{8}T\d{6}Z-[0-9a-f]{8}$/;

export type PageMessage =
  /** The page loaded (again): send it the whole state. */
  | { type: "ready" }
  /** The person sent a message or a `/memory` line. */
  | { type: "send"; text: string }
  /** The stop button: cancel the running turn. */
  | { type: "cancel" }
  /** Start a new session (made on the first message). */
  | { type: "newSession" }
  | { type: "selectSession"; sessionId: string }
  | { type: "selectProject"; folderUri: string }
  /** A fact of the "memory used" line: recall it. */
  | { type: "openFact"; factId: number; revision: number }
  /** A memory file of the "memory used" line: open it. */
  | { type: "openNote"; file: string }
  /** A link the person clicked in model text. */
  | { type: "openLink"; href: string }
  /** A code block's Copy button: its text to the clipboard. */
  | { type: "copy"; text: string }
  /** A code block's Insert button: its text at the cursor of the last active editor. */
  | { type: "insert"; text: string }
  /** The header's Rename… and Delete… of the shown session. */
  | { type: "renameSession"; sessionId: string }
  | { type: "deleteSession"; sessionId: string }
  /** The header's provider link: open the set-up; its Close: back to the chat. */
  | { type: "openSetup" }
  | { type: "closeSetup" }
  | SetupMessage;

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

const hasOnly = (value: Record<string, unknown>, keys: readonly string[]): boolean =>
  Object.keys(value).every((key) => keys.includes(key));

const boundedString = (value: unknown, max: number): value is string =>
  typeof value === "string" && value.length > 0 && value.length <= max;

const isPositiveInteger = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) > 0;

/** The message if it is one of the PageMessage shapes, else undefined. */
export function parsePageMessage(value: unknown): PageMessage | undefined {
  if (!isRecord(value) || typeof value.type !== "string") {
    return undefined;
  }
  switch (value.type) {
    case "ready":
    case "cancel":
    case "newSession":
    case "openSetup":
    case "closeSetup":
    case "setupProbe":
    case "setupKey":
    case "setupUse":
      return hasOnly(value, ["type"]) ? { type: value.type } : undefined;
    case "copy":
    case "insert":
      return hasOnly(value, ["type", "text"]) && boundedString(value.text, MAX_CODE) ? { type: value.type, text: value.text } : undefined;
    case "renameSession":
    case "deleteSession":
      return hasOnly(value, ["type", "sessionId"]) && typeof value.sessionId === "string" && SESSION_ID.test(value.sessionId)
        ? { type: value.type, sessionId: value.sessionId }
        : undefined;
    case "setupServer":
      return hasOnly(value, ["type", "baseUrl", "local"]) && boundedString(value.baseUrl, 2048) && typeof value.local === "boolean"
        ? { type: "setupServer", baseUrl: value.baseUrl, local: value.local }
        : undefined;
    case "setupModel":
      return hasOnly(value, ["type", "model"]) && boundedString(value.model, 256) ? { type: "setupModel", model: value.model } : undefined;
    case "send":
      return hasOnly(value, ["type", "text"]) && boundedString(value.text, MAX_TEXT) && value.text.trim() !== ""
        ? { type: "send", text: value.text }
        : undefined;
    case "selectSession":
      return hasOnly(value, ["type", "sessionId"]) && typeof value.sessionId === "string" && SESSION_ID.test(value.sessionId)
        ? { type: "selectSession", sessionId: value.sessionId }
        : undefined;
    case "selectProject":
      return hasOnly(value, ["type", "folderUri"]) && boundedString(value.folderUri, 4096)
        ? { type: "selectProject", folderUri: value.folderUri }
        : undefined;
    case "openFact":
      return hasOnly(value, ["type", "factId", "revision"]) && isPositiveInteger(value.factId) && isPositiveInteger(value.revision)
        ? { type: "openFact", factId: value.factId, revision: value.revision }
        : undefined;
    case "openNote":
      return hasOnly(value, ["type", "file"]) && boundedString(value.file, 512) && fileKind(value.file) !== undefined
        ? { type: "openNote", file: value.file }
        : undefined;
    case "openLink":
      return hasOnly(value, ["type", "href"]) && boundedString(value.href, 8192) && webLink(value.href) !== undefined
        ? { type: "openLink", href: value.href }
        : undefined;
    default:
      return undefined;
  }
}

/** The URL if `href` is an absolute http(s) link, the only kind the chat opens. */
export function webLink(href: string): URL | undefined {
  try {
    const url = new URL(href);
    return url.protocol === "http:" || url.protocol === "https:" ? url : undefined;
  } catch {
    return undefined;
  }
}

export interface SessionChoice {
  sessionId: string;
  /** The title (or the ID when it has none) and when the session began: "Fix the build · Nov 29, 10:04". */
  label: string;
  /** Chats, or the sessions lecode keeps for itself (remembered in the editor, MCP, imported). */
  group: "chat" | "other";
}

/** A fact of a "memory used" line as the Facts view knows it now. */
export interface FactView {
  factId: number;
  /** Its revision now (the line names the one injected). */
  revision: number;
  status: string;
  /** Its text, when valid (untrusted: drawn as text). */
  text?: string;
  /** The worst drift of its code anchors, with where: "changed: app.py:2". */
  drift?: string;
}

export interface ProjectChoice {
  folderUri: string;
  label: string;
}

export type HostMessage =
  /** The projects and sessions to pick from, newest session first, and the current ones. */
  | { type: "sessions"; projects: ProjectChoice[]; folderUri?: string; sessions: SessionChoice[]; sessionId?: string }
  /** Everything shown for the current session (replaces what the page shows). */
  | { type: "entries"; entries: Entry[]; truncated: boolean }
  /** One entry added (index = the current length) or changed. */
  | { type: "entry"; index: number; entry: Entry }
  /** A turn is running: the page shows the stop button. */
  | { type: "busy"; busy: boolean }
  /** A sentence about the view itself (a failed session list, a refused switch); undefined clears it. */
  | { type: "notice"; text?: string }
  /** The shown session's usage total, as a sentence (usage.ts); undefined hides it. */
  | { type: "usage"; text?: string }
  /** The set-up step, shown instead of the chat; undefined: the chat. */
  | { type: "setup"; view?: SetupView }
  /** The provider and model chat uses, for the header ("gpt-4o · api.openai.com"). */
  | { type: "provider"; label?: string }
  /** What is known of the facts the "memory used" lines name. */
  | { type: "facts"; facts: FactView[] }
  /** Put the cursor in the text box (the view was opened or focused). */
  | { type: "focus" }
  /** A message that was not sent (no provider, or a key problem came first), given back to the
   * text box (before what is typed there). */
  | { type: "draft"; text: string };
