/** Test doubles at the extension's one seam: the object that sends requests to lecode-ls. */
import { vi } from "vitest";
import type { ChatDeps } from "../src/chat/controller";
import type { AnchorModel, ChatSendParams, CountedIds, DoctorResult } from "../src/common/protocol";
import { Requests } from "../src/common/protocol";
import type { RequestSender } from "../src/common/requests";
import type { Project } from "../src/common/projects";

export interface RecordedCall {
  method: string;
  params: unknown;
}

type Handler = (params: never) => unknown;

/** A lecode/chat/send the test answers by hand, with the signal it was sent with. */
export interface PendingSend {
  params: ChatSendParams;
  signal?: AbortSignal;
  resolve(result: unknown): void;
  reject(error: unknown): void;
}

/** A fake LanguageClient: answers from per-method handlers and records every request. */
export class FakeServer implements RequestSender {
  readonly calls: RecordedCall[] = [];
  /** With holdSends(): every lecode/chat/send, unanswered until the test answers it. */
  sends: PendingSend[] | undefined;
  constructor(private readonly handlers: Record<string, Handler> = {}) {}

  on(method: string, handler: Handler): this {
    this.handlers[method] = handler;
    return this;
  }

  answers(method: string): boolean {
    return method in this.handlers;
  }

  /** Hold each lecode/chat/send (a turn that streams) until the test resolves or rejects it. */
  holdSends(): this {
    this.sends = [];
    return this;
  }

  async sendRequest(method: string, params: unknown, signal?: AbortSignal): Promise<unknown> {
    this.calls.push({ method, params });
    if (method === Requests.chatSend && this.sends !== undefined) {
      return new Promise((resolve, reject) => this.sends?.push({ params: params as ChatSendParams, signal, resolve, reject }));
    }
    const handler = this.handlers[method];
    if (handler === undefined) {
      throw new Error(`the fake server has no answer for ${method}`);
    }
    return handler(params as never);
  }
}

/** A JSON-RPC error as vscode-languageclient rejects with it (a ResponseError's fields). */
export function serverError(dataCode: string, message: string, code = -32000): Error {
  const error = new Error(message) as Error & { code: number; data: unknown };
  error.code = code;
  error.data = { code: dataCode };
  error.stack = `ResponseError: ${message}\n    at /home/me/.local/lib/secret/path.js:1:1`;
  return error;
}

export function project(root: string, folders: string[], overrides: Partial<Project> = {}): Project {
  const slug = `${root.split("/").pop()}-3f2a9c41d0b7`;
  return {
    projectRoot: root,
    slug,
    storePath: `/home/me/.config/lecode/memory/${slug}`,
    memoryEnabled: true,
    folderUri: folders[0],
    folders: folders.map((uri) => ({ uri, name: uri.split("/").pop() ?? uri })),
    ...overrides,
  };
}

/** An anchor of src/app.py lines 3-4 as lecode/facts/list reports it (current, checked on disk). */
export function anchor(overrides: Partial<AnchorModel> = {}): AnchorModel {
  return {
    index: 0,
    path: "src/app.py",
    startLine: 3,
    endLine: 4,
    sha256: `sha256:${"a".repeat(64)}`,
    commit: "0123456789abcdef0123456789abcdef01234567",
    capturedAt: "2026-12-01T10:00:00Z",
    status: "current",
    currentStartLine: 3,
    currentEndLine: 4,
    checkedAgainst: "disk",
    ...overrides,
  };
}

/** The provider a configured server reports (`lecode/provider/info`). */
export const CONFIGURED = { configured: true, baseUrl: "http://127.0.0.1:8080/v1", model: "gpt-4o", apiKeyEnv: "", apiKeySet: false };

/**
 * A ChatController's dependencies for tests: the fake server as the sender (answering
 * `lecode/provider/info` as configured unless the test says otherwise), recording doubles for
 * everything else, and the session in use kept in memory as the workspace state would keep it.
 */
export function chatDeps(server: FakeServer, folderUri: string, overrides: Partial<ChatDeps> = {}): ChatDeps {
  if (!server.answers(Requests.providerInfo)) {
    server.on(Requests.providerInfo, () => CONFIGURED);
  }
  let last: { folderUri?: string; sessionId: string } | undefined;
  return {
    sender: server,
    projects: () => [{ folderUri, label: "app" }],
    openFact: vi.fn(async () => undefined),
    openNote: vi.fn(async () => undefined),
    openExternal: vi.fn(async () => undefined),
    copy: vi.fn(async () => undefined),
    insert: vi.fn(async () => undefined),
    renameSession: vi.fn(async () => false),
    deleteSession: vi.fn(async () => false),
    facts: { lookup: vi.fn(async () => []) },
    lastSession: {
      get: () => last,
      set: (value) => {
        last = value;
      },
    },
    setup: {
      fetch: async () => {
        throw new Error("no network in this test");
      },
      storedKey: async () => undefined,
      askKey: vi.fn(async () => false),
      save: vi.fn(async () => undefined),
    },
    ...overrides,
  };
}

const none = (): CountedIds => ({ count: 0, ids: [] });

/** A `lecode/memory/doctor` answer: nothing to report, unless `overrides` says otherwise. */
export function doctor(overrides: Partial<DoctorResult> = {}): DoctorResult {
  return {
    facts: 0,
    byStatus: { valid: none(), retired: none(), missing: none(), stale: none(), hidden: none(), unverified: none() },
    drifted: none(),
    anchorsDeleted: none(),
    duplicates: { count: 0, groups: [] },
    neverUsed: none(),
    proposedRetirements: none(),
    proposedCorrections: none(),
    notes: [],
    ...overrides,
  };
}
