/**
 * lecode: Delete Session…: the modal confirmation names how many facts cite the session (they
 * become missing), and only "Delete" deletes it through the server.
 */
// covers S6 (issue 11, item 6)
import { beforeEach, describe, expect, it, vi } from "vitest";
import * as api from "../src/common/vscodeapi";
import type { SessionInfoModel } from "../src/common/protocol";
import { Requests } from "../src/common/protocol";
import type { FactDeps } from "../src/facts/commands";
import { KEEP } from "../src/common/confirm";
import { DELETE, deleteConfirmation, sessionCommands } from "../src/sessions/deleteSession";
import { FakeServer, project, serverError } from "./fakes";

vi.mock("../src/common/vscodeapi");

const APP = "file:///src/app";
const CITED = "20261129T100000Z-3f2a9c41";
const QUIET = "20261130T080000Z-0badc0de";

const sessions: SessionInfoModel[] = [
  { sessionId: CITED, title: "build fixes", created: "2026-11-29T10:00:00Z", records: 12, citingFacts: 2 },
  { sessionId: QUIET, title: "", created: "2026-11-30T08:00:00Z", records: 2, citingFacts: 0 },
];

function harness(): { server: FakeServer; deps: FactDeps; refreshed: () => number } {
  let refreshed = 0;
  const projects = [project("/src/app", [APP])];
  const server = new FakeServer()
    .on(Requests.sessionList, () => ({ sessions }))
    .on(Requests.sessionDelete, () => ({ citingFacts: 2 }));
  const deps: FactDeps = {
    sender: server,
    projects: { projects, projectOfFolder: () => projects[0] },
    transcripts: { linesOf: () => undefined, problemOf: () => undefined },
    refresh: () => refreshed++,
    showMore: () => undefined,
  };
  return { server, deps, refreshed: () => refreshed };
}

const run = (deps: FactDeps) => sessionCommands(deps)["lecode.deleteSession"]();
const pickSession = (id: string) =>
  vi.mocked(api.showQuickPick).mockImplementation(async (items) =>
    (items as unknown as { session: SessionInfoModel }[]).find((item) => item.session.sessionId === id) as never,
  );

beforeEach(() => {
  vi.mocked(api.showWarningMessage).mockResolvedValue(undefined);
});

describe("deleteConfirmation", () => {
  it("says how many facts cite the session and that they become missing", () => {
    expect(deleteConfirmation(sessions[0])).toBe(
      `Delete session "build fixes" (${CITED})? Its transcript (11 records) is deleted for good. ` +
        "2 facts cite it: they become missing (kept, but without evidence).",
    );
  });

  it("says when no fact cites it", () => {
    expect(deleteConfirmation(sessions[1])).toBe(
      `Delete session ${QUIET}? Its transcript (1 record) is deleted for good. No fact cites it.`,
    );
  });
});

describe("lecode.deleteSession", () => {
  it("lists the sessions with their citing facts, asks in a modal, and deletes on Delete", async () => {
    const h = harness();
    pickSession(CITED);
    vi.mocked(api.showWarningMessage).mockResolvedValue(DELETE as never);
    await run(h.deps);
    const picks = vi.mocked(api.showQuickPick).mock.calls[0][0] as unknown as { description: string }[];
    expect(picks.map((pick) => pick.description)).toEqual(["", `${CITED} · cited by 2 facts`]);
    const [message, options, ...items] = vi.mocked(api.showWarningMessage).mock.calls[0];
    // The same modal as every destructive confirmation: Keep first, so Enter keeps the session.
    expect([message, options, items]).toEqual([deleteConfirmation(sessions[0]), expect.objectContaining({ modal: true }), [KEEP, DELETE]]);
    expect(h.server.calls.at(-1)).toEqual({ method: "lecode/session/delete", params: { workspaceUri: APP, sessionId: CITED } });
    expect(h.refreshed()).toBe(1);
    expect(vi.mocked(api.showInformationMessage).mock.calls[0][0]).toBe(`Deleted session ${CITED}. 2 facts are missing now.`);
  });

  it("deletes nothing when the confirmation is dismissed", async () => {
    const h = harness();
    pickSession(CITED);
    await run(h.deps);
    expect(h.server.calls.map((call) => call.method)).toEqual(["lecode/session/list"]);
  });

  it("shows the server's refusal (a turn running) as its sentence", async () => {
    const h = harness();
    h.server.on(Requests.sessionDelete, () => {
      throw serverError("session_busy", `sessionId: session ${CITED} has a turn or a compaction running`);
    });
    pickSession(CITED);
    vi.mocked(api.showWarningMessage).mockResolvedValue(DELETE as never);
    await run(h.deps);
    expect(vi.mocked(api.showErrorMessage).mock.calls[0][0]).toBe(`sessionId: session ${CITED} has a turn or a compaction running`);
    expect(h.refreshed()).toBe(0);
  });
});
