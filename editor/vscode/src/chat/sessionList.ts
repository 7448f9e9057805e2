/**
 * The chat's session picker: newest first, chats apart from the sessions lecode keeps for itself
 * (the "Remembered in the editor" session, MCP clients', imported ones), each named by its title
 * and when it began, so that two sessions that began alike still read differently.
 */
import type { SessionInfoModel } from "../common/protocol";
import type { SessionChoice } from "./messages";

/** "Nov 29, 10:04" in the person's time zone (or `timeZone`), or "" for a date that is not one. */
export function startedAt(created: string, timeZone?: string): string {
  const date = new Date(created);
  if (created === "" || Number.isNaN(date.getTime())) {
    return "";
  }
  const format = new Intl.DateTimeFormat("en", { month: "short", day: "numeric", hour: "2-digit", minute: "2-digit", hourCycle: "h23", timeZone });
  return format.format(date);
}

/** A session's name in the picker: its title (or its ID) and when it began. */
export function sessionLabel(session: SessionInfoModel, timeZone?: string): string {
  const title = session.title.trim() === "" ? session.sessionId : session.title;
  const when = startedAt(session.created, timeZone);
  const damaged = session.corrupt ? " (damaged)" : "";
  return `${title}${when === "" ? "" : ` · ${when}`}${damaged}`;
}

/** The picker's entries, newest first. */
export function sessionChoices(sessions: readonly SessionInfoModel[], timeZone?: string): SessionChoice[] {
  return [...sessions].reverse().map((session) => ({
    sessionId: session.sessionId,
    label: sessionLabel(session, timeZone),
    group: (session.origin ?? "chat") === "chat" ? "chat" : "other",
  }));
}
