/**
 * Completion of `/memory` lines in the chat's text box: `/` offers `/memory`, `/memory ` offers
 * its subcommands (T5), filtered by what is typed. Pure, so the page and the tests share it.
 */

export interface Completion {
  /** What the list shows, e.g. `/memory search`. */
  label: string;
  /** What the text box holds once it is chosen. */
  insert: string;
  /** The arguments and what it does. */
  detail: string;
}

export const MEMORY = "/memory";

/** The /memory subcommands as `/memory help` lists them: name, arguments, what it does. */
export const SUBCOMMANDS: readonly (readonly [string, string, string])[] = [
  ["show", "", "print MEMORY.md (capped at [memory] max_bytes)"],
  ["edit", "", "print the uncapped MEMORY.md for manual editing"],
  ["search", "<pattern>", "search the Markdown memory (regular expression, at most 50 hits)"],
  ["log", "[date]", "print a daily log (YYYY-MM-DD; today by default)"],
  ["notes", "", "list named notes"],
  ["facts", "[offset] [path | query]", "list facts: ID, revision, status, source; a query ranks them"],
  ["pin", "<fact-id>", "pin a fact: every chat request's memory shows it first"],
  ["unpin", "<fact-id>", "unpin a fact"],
  ["recall", "<fact-id> [offset]", "a fact and a page of its evidence"],
  ["read", "<session-id> <start-seq> <end-seq> [offset]", "a validated page of a session range"],
  ["correct", "<fact-id> <revision> <session-id> <start-seq> <end-seq> <text>", "correct a fact with new evidence"],
  ["forget", "<fact-id>", "forget a fact; its evidence is excluded for good"],
  ["help", "", "list the /memory commands"],
];

function subcommands(typed: string): Completion[] {
  return SUBCOMMANDS.filter(([name]) => name.startsWith(typed) && name !== typed).map(([name, args, what]) => ({
    label: `${MEMORY} ${name}`,
    // A subcommand that takes arguments leaves the cursor after a space, ready for them.
    insert: args === "" ? `${MEMORY} ${name}` : `${MEMORY} ${name} `,
    detail: args === "" ? what : `${args}: ${what}`,
  }));
}

/** The completions for the whole text of the box (none once it is more than a command word). */
export function completions(text: string): Completion[] {
  if (text === MEMORY) {
    return subcommands("");
  }
  if (/^\/[a-z]*$/.test(text)) {
    return MEMORY.startsWith(text) ? [{ label: MEMORY, insert: `${MEMORY} `, detail: "memory commands" }] : [];
  }
  const typed = /^\/memory (\S*)$/.exec(text)?.[1];
  return typed === undefined ? [] : subcommands(typed);
}
