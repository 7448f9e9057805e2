/**
 * The store-relative names of memory files, as protocol.md allows them: `MEMORY.md`,
 * `scratchpad.md`, `daily/YYYY-MM-DD.md` and `notes/<name>.md`. The server validates every name
 * itself; the checks here only let the UI refuse a bad name before a round trip.
 */

export const MEMORY_FILE = "MEMORY.md";
export const SCRATCHPAD_FILE = "scratchpad.md";

/** The server's limit on a note name (the part between `notes/` and `.md`), in UTF-8 bytes. */
export const NOTE_NAME_MAX_BYTES = 128;

export type FileKind = "memory" | "scratchpad" | "daily" | "note";

const DAILY = /^daily\/(\d{4})-(\d{2})-(\d{2})\.md$/;
// Control, format (bidi overrides, zero-width), surrogate and line/paragraph separators: the
// categories the server refuses, because they hide what a name really is.
const INVISIBLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}]/u;

function pad(value: number, width: number): string {
  return String(value).padStart(width, "0");
}

/** The daily log of `day` in the local time zone, e.g. `daily/2026-11-29.md`. */
export function dailyLogFile(day: Date): string {
  return `daily/${pad(day.getFullYear(), 4)}-${pad(day.getMonth() + 1, 2)}-${pad(day.getDate(), 2)}.md`;
}

/**
 * Why `name` cannot be a note name, as a sentence for the input box, or undefined if it can.
 * `name` is what the user typed, already trimmed, with or without the `.md` suffix.
 */
export function noteNameProblem(name: string): string | undefined {
  const stem = name.endsWith(".md") ? name.slice(0, -3) : name;
  if (stem === "") {
    return "Name the note, for example build";
  }
  if (stem.includes("/") || stem.includes("\\")) {
    return "A note name may not contain / or \\ (notes have no folders)";
  }
  if (stem.includes("..")) {
    return "A note name may not contain ..";
  }
  if (stem.startsWith(".")) {
    return "A note name may not start with . (hidden names are not allowed)";
  }
  if (INVISIBLE.test(stem)) {
    return "A note name may not contain control or invisible formatting characters";
  }
  if (new TextEncoder().encode(stem.normalize("NFC")).length > NOTE_NAME_MAX_BYTES) {
    return `A note name may be at most ${NOTE_NAME_MAX_BYTES} bytes long`;
  }
  return undefined;
}

/** The store-relative file of a valid note name: `build` and `build.md` both give `notes/build.md`. */
export function noteFile(name: string): string {
  const stem = name.endsWith(".md") ? name.slice(0, -3) : name;
  return `notes/${stem.normalize("NFC")}.md`;
}

/** What kind of memory file `file` is, or undefined if it is not an allowed name. */
export function fileKind(file: string): FileKind | undefined {
  if (file === MEMORY_FILE) {
    return "memory";
  }
  if (file === SCRATCHPAD_FILE) {
    return "scratchpad";
  }
  if (DAILY.test(file)) {
    return "daily";
  }
  if (file.startsWith("notes/") && file.endsWith(".md")) {
    const stem = file.slice("notes/".length, -".md".length);
    return noteNameProblem(stem) === undefined ? "note" : undefined;
  }
  return undefined;
}
