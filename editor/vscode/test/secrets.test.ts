/**
 * lecode: Scan Memory for Secrets and lecode: Forget a Secret Everywhere…: the listing names every
 * place and kind but never a value, Scrub All… asks before scrubbing, and the typed secret goes
 * in a password box and only into the scrub request's params.
 */
// covers issue 27, item 3 (the extension's secret commands)
import { beforeEach, describe, expect, it, vi } from "vitest";
import * as api from "../src/common/vscodeapi";
import { KEEP } from "../src/common/confirm";
import type { ScanSecretsResult, ScrubSecretsResult } from "../src/common/protocol";
import { Requests } from "../src/common/protocol";
import {
  FORGET,
  SCAN_LIMIT,
  SCRUB,
  SCRUB_ALL,
  SHOW_PLACES,
  type SecretDeps,
  scanListing,
  secretCommands,
  traceLogsParams,
  validateSecretInput,
} from "../src/facts/secrets";
import { FakeServer, project, serverError } from "./fakes";

vi.mock("../src/common/vscodeapi");

const APP = "file:///src/app";
const SESSION = "20261129T100000Z-3f2a9c41";
const TYPED = "ghp_the-token-I-just-rotated-0123456789";

const scan = (overrides: Partial<ScanSecretsResult> = {}): ScanSecretsResult => ({
  found: 3,
  kinds: { "github-token": 2, "url-password": 1 },
  places: [
    { kind: "url-password", file: "MEMORY.md.bak", line: 12 },
    { kind: "github-token", file: `sessions/${SESSION}.jsonl`, sessionId: SESSION, seq: 3 },
    { kind: "github-token", file: "facts.sqlite3", factId: 4, revision: 2 },
  ],
  truncated: false,
  raw: [{ file: "facts.sqlite3-wal", found: 1, kinds: { "github-token": 1 } }],
  unreadable: [],
  ...overrides,
});

const scrubbed: ScrubSecretsResult = {
  notes: ["MEMORY.md", "MEMORY.md.bak"],
  titles: false,
  sessions: [SESSION],
  records: 1,
  reattached: 2,
  facts: [4],
  revisions: 1,
  purged: true,
  remaining: 0,
};

function harness(result: ScanSecretsResult = scan(), traces = false) {
  const projects = [project("/src/app", [APP])];
  const server = new FakeServer()
    .on(Requests.memoryScanSecrets, () => result)
    .on(Requests.memoryScrubSecrets, () => scrubbed);
  const listing = { write: vi.fn(), reveal: vi.fn() };
  const deps: SecretDeps = {
    sender: server,
    projects: { projects, projectOfFolder: () => projects[0] },
    listing,
    tracesParams: () => traces,
  };
  return { server, listing, commands: secretCommands(deps) };
}

/** Everything the test doubles of the VS Code API and the listing were given, as one string. */
function everythingShown(listing: { write: { mock: { calls: unknown[][] } } }): string {
  return JSON.stringify([
    listing.write.mock.calls,
    vi.mocked(api.showInformationMessage).mock.calls,
    vi.mocked(api.showWarningMessage).mock.calls,
    vi.mocked(api.showErrorMessage).mock.calls,
    vi.mocked(api.showInputBox).mock.calls.map(([options]) => ({ ...options, validateInput: undefined })),
  ]);
}

beforeEach(() => {
  vi.mocked(api.showWarningMessage).mockResolvedValue(undefined);
});

describe("the scan's listing", () => {
  it("renders every place with its kind, and no value", () => {
    const text = scanListing(scan(), "app");
    expect(text).toContain("3 secrets found: github-token 2, url-password 1");
    expect(text).toContain("  MEMORY.md.bak:12 — url-password");
    expect(text).toContain(`  sessions/${SESSION}.jsonl · session ${SESSION}, seq 3 — github-token`);
    expect(text).toContain("  facts.sqlite3 · fact #4 r2 — github-token");
    expect(text).toContain("  facts.sqlite3-wal — 1 (github-token 1)");
    expect(text).not.toMatch(/ghp_|value:/);
  });

  it("says how many were not listed and which transcripts could not be read", () => {
    const text = scanListing(scan({ found: 250, truncated: true, unreadable: [`sessions/${SESSION}.jsonl`] }), "app");
    expect(text).toContain("… and 247 more (the first 3 are listed)");
    expect(text).toContain(`Transcripts that could not be read (damaged), so not scanned:\n  sessions/${SESSION}.jsonl`);
  });
});

describe("lecode.scanSecrets", () => {
  it("asks for every place of the project and says so when there is none", async () => {
    const h = harness(scan({ found: 0, kinds: {}, places: [], raw: [] }));
    await h.commands["lecode.scanSecrets"]();
    expect(h.server.calls).toEqual([{ method: Requests.memoryScanSecrets, params: { workspaceUri: APP, limit: SCAN_LIMIT } }]);
    expect(vi.mocked(api.showInformationMessage).mock.calls).toEqual([["No secrets found in the memory of app."]]);
    expect(h.listing.write).not.toHaveBeenCalled();
  });

  it("writes the listing, warns with the count and kinds, and Show Places reveals it", async () => {
    const h = harness();
    vi.mocked(api.showWarningMessage).mockResolvedValue(SHOW_PLACES as never);
    await h.commands["lecode.scanSecrets"]();
    expect(h.listing.write.mock.calls).toEqual([[scanListing(scan(), "app")]]);
    expect(vi.mocked(api.showWarningMessage).mock.calls).toEqual([
      ["3 secrets found in the memory of app (github-token 2, url-password 1).", {}, SHOW_PLACES, SCRUB_ALL],
    ]);
    expect(h.listing.reveal).toHaveBeenCalledOnce();
    expect(h.server.calls.map((call) => call.method)).toEqual([Requests.memoryScanSecrets]);
  });

  it("Scrub All… asks in a modal first and scrubs nothing when the person keeps", async () => {
    const h = harness();
    vi.mocked(api.showWarningMessage).mockResolvedValueOnce(SCRUB_ALL as never).mockResolvedValueOnce(KEEP as never);
    await h.commands["lecode.scanSecrets"]();
    const [question, options, ...items] = vi.mocked(api.showWarningMessage).mock.calls[1];
    expect([question, options, items]).toEqual([
      "Scrub every secret in the memory of app?",
      expect.objectContaining({ modal: true }),
      [KEEP, SCRUB],
    ]);
    expect(h.server.calls.map((call) => call.method)).toEqual([Requests.memoryScanSecrets]);
  });

  it("Scrub All… scrubs without a secret once confirmed, and reports what it rewrote", async () => {
    const h = harness();
    vi.mocked(api.showWarningMessage).mockResolvedValueOnce(SCRUB_ALL as never).mockResolvedValueOnce(SCRUB as never);
    await h.commands["lecode.scanSecrets"]();
    expect(h.server.calls.at(-1)).toEqual({ method: Requests.memoryScrubSecrets, params: { workspaceUri: APP } });
    expect(vi.mocked(api.showInformationMessage).mock.calls).toEqual([
      [
        "Scrubbed the memory of app: 1 transcript record in 1 session, 2 note files, 1 fact (1 revision) rewritten. " +
          "2 source references re-attached: the facts citing them stay valid.",
      ],
    ]);
  });

  it("shows the server's refusal as its sentence", async () => {
    const h = harness();
    h.server.on(Requests.memoryScanSecrets, () => {
      throw serverError("memory_disabled", "memory is disabled for this project");
    });
    await h.commands["lecode.scanSecrets"]();
    expect(vi.mocked(api.showErrorMessage).mock.calls).toEqual([["memory is disabled for this project"]]);
  });
});

describe("lecode.scrubSecret", () => {
  it("asks in a password box, confirms in a modal, and sends the text only as the request's secret", async () => {
    const h = harness();
    vi.mocked(api.showInputBox).mockResolvedValue(TYPED);
    vi.mocked(api.showWarningMessage).mockResolvedValue(FORGET as never);
    await h.commands["lecode.scrubSecret"]();
    const options = vi.mocked(api.showInputBox).mock.calls[0][0];
    expect(options.password).toBe(true);
    expect(options.prompt).toMatch(/every copy of it in the project's memory \(transcripts, notes, facts\)/);
    expect(options.prompt).toMatch(/facts that cited those records keep their evidence/);
    expect(options.validateInput).toBe(validateSecretInput);
    expect(vi.mocked(api.showWarningMessage).mock.calls[0][1]).toEqual(expect.objectContaining({ modal: true }));
    expect(h.server.calls).toEqual([{ method: Requests.memoryScrubSecrets, params: { workspaceUri: APP, secret: TYPED } }]);
    expect(everythingShown(h.listing)).not.toContain(TYPED);
  });

  it("sends nothing when the confirmation is kept or the box is dismissed", async () => {
    const h = harness();
    vi.mocked(api.showInputBox).mockResolvedValue(TYPED);
    vi.mocked(api.showWarningMessage).mockResolvedValue(KEEP as never);
    await h.commands["lecode.scrubSecret"]();
    vi.mocked(api.showInputBox).mockResolvedValue(undefined);
    await h.commands["lecode.scrubSecret"]();
    expect(h.server.calls).toEqual([]);
  });

  it("refuses a too-short (or too-long) text in the box, and again if Enter raced it", async () => {
    expect(validateSecretInput("short")).toBe("Type at least 8 characters: a shorter text would match too much.");
    expect(validateSecretInput("x".repeat(16385))).toBe("Type at most 16,384 characters.");
    expect(validateSecretInput("12345678")).toBeUndefined();
    expect(validateSecretInput("x".repeat(16384))).toBeUndefined();
    const h = harness();
    vi.mocked(api.showInputBox).mockResolvedValue("short");
    await h.commands["lecode.scrubSecret"]();
    expect(h.server.calls).toEqual([]);
    expect(vi.mocked(api.showErrorMessage).mock.calls).toEqual([["Type at least 8 characters: a shorter text would match too much."]]);
    expect(everythingShown(h.listing)).not.toContain('"short"');
  });

  it("shows the server's error as its sentence, never with the text", async () => {
    const h = harness();
    h.server.on(Requests.memoryScrubSecrets, () => {
      throw serverError("store_error", "could not rewrite MEMORY.md (Permission denied)");
    });
    vi.mocked(api.showInputBox).mockResolvedValue(TYPED);
    vi.mocked(api.showWarningMessage).mockResolvedValue(FORGET as never);
    await h.commands["lecode.scrubSecret"]();
    expect(vi.mocked(api.showErrorMessage).mock.calls).toEqual([["could not rewrite MEMORY.md (Permission denied)"]]);
    expect(everythingShown(h.listing)).not.toContain(TYPED);
  });

  it("refuses before asking while verbose tracing would log the request's params", async () => {
    expect([traceLogsParams("verbose"), traceLogsParams({ verbosity: "verbose" }), traceLogsParams("messages"), traceLogsParams(undefined)]).toEqual([
      true,
      true,
      false,
      false,
    ]);
    const h = harness(scan(), true);
    await h.commands["lecode.scrubSecret"]();
    expect(api.showInputBox).not.toHaveBeenCalled();
    expect(h.server.calls).toEqual([]);
    expect(vi.mocked(api.showErrorMessage).mock.calls[0][0]).toMatch(/lecode\.trace\.server/);
  });
});
