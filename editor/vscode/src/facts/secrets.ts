/**
 * The secret commands: lecode: Scan Memory for Secrets and lecode: Forget a Secret Everywhere….
 *
 * Scan lists where the server's detector finds credentials in the project's memory store
 * (`lecode/memory/scanSecrets`): each place (a note's line, a session's record, a fact's
 * revision) and its kind, never a value, in the "lecode: Secrets" output channel, and offers to
 * scrub them all (`lecode/memory/scrubSecrets`), after a modal question. Forget a Secret asks for
 * an exact text in a password box (a token just rotated, which the detector may not know) and
 * scrubs every copy of it too. The typed text goes only into that request's params: it is never
 * logged, shown, nor kept.
 */
import { confirmDestructive } from "../common/confirm";
import type { ScanSecretsResult, ScrubSecretsResult, SecretPlace } from "../common/protocol";
import { Requests } from "../common/protocol";
import { type RequestSender, request } from "../common/requests";
import * as api from "../common/vscodeapi";
import { CANCELLED, type ProjectSource, chooseFolder, guarded } from "../notes/commands";
import { workspaceParams } from "../notes/uri";

/** Where the scan's listing goes: in VS Code, a dedicated output channel. */
export interface Listing {
  /** Replace the listing with `text`. */
  write(text: string): void;
  /** Bring the listing into view. */
  reveal(): void;
}

export interface SecretDeps {
  sender: RequestSender;
  projects: ProjectSource;
  listing: Listing;
  /**
   * Whether VS Code's language client logs request params (`lecode.trace.server` verbose): a
   * typed secret would then land in the log, so Forget a Secret refuses to send it.
   */
  tracesParams: () => boolean;
}

export const SHOW_PLACES = "Show Places";
export const SCRUB_ALL = "Scrub All…";
export const SCRUB = "Scrub All";
export const FORGET = "Forget Everywhere";

/** The most places a scan lists (the server's maximum); `found` counts them all. */
export const SCAN_LIMIT = 1000;
export const SECRET_MIN = 8;
export const SECRET_MAX = 16384;

const plural = (count: number, one: string, many = `${one}s`): string => `${count} ${count === 1 ? one : many}`;

/** `github-token 2, url-password 1`, most frequent first. */
export function kindsText(kinds: Partial<Record<string, number>>): string {
  return Object.entries(kinds)
    .filter((entry): entry is [string, number] => typeof entry[1] === "number" && entry[1] > 0)
    .sort(([a, m], [b, n]) => n - m || a.localeCompare(b))
    .map(([kind, count]) => `${kind} ${count}`)
    .join(", ");
}

/** One place, as `file:line`, `file · session S, seq N` or `file · fact #F r2`, then its kind. */
export function placeText(place: SecretPlace): string {
  let where = place.line !== undefined && place.line !== null ? `${place.file}:${place.line}` : place.file;
  if (place.sessionId !== undefined && place.sessionId !== null) {
    where += ` · session ${place.sessionId}${place.seq !== undefined && place.seq !== null ? `, seq ${place.seq}` : ""}`;
  }
  if (place.factId !== undefined && place.factId !== null) {
    where += ` · fact #${place.factId}${place.revision !== undefined && place.revision !== null ? ` r${place.revision}` : ""}`;
  }
  return `${where} — ${place.kind}`;
}

/** The scan's listing: every place and kind (the server never sends a value, nor does this). */
export function scanListing(result: ScanSecretsResult, name: string): string {
  const lines = [`Secrets in the memory of ${name} (places and kinds only; values are never shown)`, ""];
  if (result.found === 0) {
    lines.push("None in the notes, transcripts or facts.");
  } else {
    lines.push(`${plural(result.found, "secret")} found: ${kindsText(result.kinds)}`, "");
    lines.push(...result.places.map((place) => `  ${placeText(place)}`));
    if (result.truncated) {
      lines.push(`  … and ${result.found - result.places.length} more (the first ${result.places.length} are listed)`);
    }
  }
  if (result.raw.length > 0) {
    lines.push("", "Other store files whose bytes hold a secret (SQLite's databases, free pages and WAL, indexes):");
    lines.push(...result.raw.map((raw) => `  ${raw.file} — ${raw.found} (${kindsText(raw.kinds)})`));
  }
  if (result.unreadable.length > 0) {
    lines.push("", "Transcripts that could not be read (damaged), so not scanned:");
    lines.push(...result.unreadable.map((file) => `  ${file}`));
  }
  lines.push(
    "",
    'Scrub All… (in the scan\'s message) rewrites every copy as a marker such as [secret:github-token:3fa9c2d1]; ' +
      '"lecode: Forget a Secret Everywhere…" does the same for an exact text you type.',
  );
  return lines.join("\n");
}

/** What a scrub did, in one sentence or two. */
export function scrubSummary(result: ScrubSecretsResult, name: string): string {
  const rewritten = [
    result.records > 0 ? `${plural(result.records, "transcript record")} in ${plural(result.sessions.length, "session")}` : "",
    result.notes.length > 0 ? plural(result.notes.length, "note file") : "",
    result.facts.length > 0 ? `${plural(result.facts.length, "fact")} (${plural(result.revisions, "revision")})` : "",
  ].filter((part) => part !== "");
  const parts = [
    rewritten.length === 0
      ? `Nothing to rewrite in the memory of ${name}.`
      : `Scrubbed the memory of ${name}: ${rewritten.join(", ")} rewritten.`,
  ];
  if (result.reattached > 0) {
    parts.push(`${plural(result.reattached, "source reference")} re-attached: the facts citing them stay valid.`);
  }
  if (result.remaining > 0) {
    parts.push(`${plural(result.remaining, "secret")} remain (a file could not be rewritten): scan again.`);
  }
  if (!result.purged) {
    parts.push("SQLite's leftovers are not gone yet (another process was reading facts.sqlite3): scrub again to finish.");
  }
  return parts.join(" ");
}

/** What the secret input box says about the text typed (undefined when it is fine). */
export function validateSecretInput(value: string): string | undefined {
  if (value.length < SECRET_MIN) {
    return `Type at least ${SECRET_MIN} characters: a shorter text would match too much.`;
  }
  if (value.length > SECRET_MAX) {
    return `Type at most ${SECRET_MAX.toLocaleString("en-US")} characters.`;
  }
  return undefined;
}

/** Whether a `lecode.trace.server` value makes VS Code's language client log request params. */
export function traceLogsParams(value: unknown): boolean {
  const verbosity = typeof value === "object" && value !== null ? (value as { verbosity?: unknown }).verbosity : value;
  return verbosity === "verbose";
}

function projectName(deps: SecretDeps, folder: string | undefined): string {
  const project = folder === undefined ? deps.projects.projects[0] : deps.projects.projectOfFolder(folder);
  return project === undefined ? "this project" : project.folders.map((f) => f.name).join(", ");
}

async function report(result: ScrubSecretsResult, name: string): Promise<void> {
  const summary = scrubSummary(result, name);
  if (result.remaining > 0 || !result.purged) {
    await api.showWarningMessage(summary, {});
  } else {
    await api.showInformationMessage(summary);
  }
}

async function scrubAll(deps: SecretDeps, folder: string | undefined, name: string): Promise<void> {
  const sure = await confirmDestructive(
    `Scrub every secret in the memory of ${name}?`,
    "Every copy the detector finds in the project's notes (and their .bak copies), transcripts and facts " +
      "(every revision) is rewritten as a marker naming its kind, such as [secret:github-token:3fa9c2d1], and " +
      "SQLite's leftovers are purged. Facts that cited a rewritten record keep their evidence: it is re-attached, " +
      "and recall shows it as scrubbed.",
    SCRUB,
  );
  if (!sure) {
    return;
  }
  const result = await request(deps.sender, Requests.memoryScrubSecrets, workspaceParams(folder));
  await report(result, name);
}

export async function scanSecrets(deps: SecretDeps): Promise<void> {
  const folder = await chooseFolder(deps);
  if (folder === CANCELLED) {
    return;
  }
  const name = projectName(deps, folder);
  const result = await request(deps.sender, Requests.memoryScanSecrets, { ...workspaceParams(folder), limit: SCAN_LIMIT });
  const leftovers = result.raw.reduce((sum, raw) => sum + raw.found, 0);
  if (result.found === 0 && leftovers === 0) {
    const unread = result.unreadable.length > 0 ? ` (${plural(result.unreadable.length, "transcript")} could not be read)` : "";
    await api.showInformationMessage(`No secrets found in the memory of ${name}${unread}.`);
    return;
  }
  deps.listing.write(scanListing(result, name));
  const message =
    result.found > 0
      ? `${plural(result.found, "secret")} found in the memory of ${name} (${kindsText(result.kinds)}).`
      : `No secret is left in the notes, transcripts or facts of ${name}, but ${plural(result.raw.length, "store file")} ` +
        `still hold copies in their bytes (${result.raw.map((raw) => raw.file).join(", ")}).`;
  const choice = await api.showWarningMessage(message, {}, SHOW_PLACES, SCRUB_ALL);
  if (choice === SHOW_PLACES) {
    deps.listing.reveal();
  } else if (choice === SCRUB_ALL) {
    await scrubAll(deps, folder, name);
  }
}

export async function scrubSecret(deps: SecretDeps): Promise<void> {
  if (deps.tracesParams()) {
    await api.showErrorMessage(
      'Turn "lecode.trace.server" off (or to "messages") first: with "verbose" tracing, VS Code\'s language ' +
        "client writes every request's params to its log, and the text you type would be among them.",
    );
    return;
  }
  const folder = await chooseFolder(deps);
  if (folder === CANCELLED) {
    return;
  }
  const name = projectName(deps, folder);
  const secret = await api.showInputBox({
    title: `Forget a Secret Everywhere (${name})`,
    prompt:
      "The exact text to remove (a token you just rotated, say): every copy of it in the project's memory " +
      "(transcripts, notes, facts) is rewritten as [secret:given:…], and the facts that cited those records " +
      "keep their evidence. Not shown, logged nor kept.",
    password: true,
    ignoreFocusOut: true,
    validateInput: validateSecretInput,
  });
  if (secret === undefined) {
    return;
  }
  // The box validates as the person types, but an Enter can race the last validation.
  const problem = validateSecretInput(secret);
  if (problem !== undefined) {
    await api.showErrorMessage(problem);
    return;
  }
  const sure = await confirmDestructive(
    `Forget the text you typed everywhere in the memory of ${name}?`,
    "Every copy of it in the project's notes (and their .bak copies), " +
      "transcripts and facts (every revision) is rewritten as [secret:given:…], and so is every secret the " +
      "detector finds. Facts that cited a rewritten record keep their evidence: it is re-attached, and recall " +
      "shows it as scrubbed.",
    FORGET,
  );
  if (!sure) {
    return;
  }
  const result = await request(deps.sender, Requests.memoryScrubSecrets, { ...workspaceParams(folder), secret });
  await report(result, name);
}

/** The secret commands, by id; extension.ts registers them. */
export function secretCommands(deps: SecretDeps): Record<string, (arg?: unknown) => Promise<void>> {
  return {
    "lecode.scanSecrets": guarded(() => scanSecrets(deps)),
    "lecode.scrubSecret": guarded(() => scrubSecret(deps)),
  };
}
