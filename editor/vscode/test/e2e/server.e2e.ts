/**
 * The extension's logic against a real lecode-ls over stdio: the params it sends are the ones the
 * strict server accepts, saves go through the server's atomic write with its .bak, the change
 * notification reaches open documents, and server errors arrive as sentences.
 *
 * The server command is $LECODE_LS_E2E_COMMAND (a JSON array) or the repository's
 * .venv/bin/python -m lecode_ls (`uv sync` at the repository root makes it).
 */
// covers P7 (memory and facts through the server, recall-to-source), P5 (errors are sentences with stable codes), F7, R7
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type MessageConnection,
  StreamMessageReader,
  StreamMessageWriter,
  createMessageConnection,
} from "vscode-jsonrpc/node";
import * as vscode from "vscode";
import { serverErrorCode } from "../../src/common/errors";
import { ProjectIndex } from "../../src/common/projects";
import { type FactsDidChangeParams, type MemoryDidChangeParams, Notifications, Requests } from "../../src/common/protocol";
import { type RequestSender, request } from "../../src/common/requests";
import { TranscriptProvider } from "../../src/sessions/transcriptProvider";
import { contextRange, transcriptUri } from "../../src/sessions/uri";
import { MemoryFileSystem } from "../../src/notes/fileSystem";
import { memoryUri } from "../../src/notes/uri";
import { FactsTreeProvider } from "../../src/views/factsTree";
import type { FactNode } from "../../src/views/nodes";
import { MemoryTreeProvider, type MemoryNode } from "../../src/views/memoryTree";
import { serverCommand } from "./serverCommand";

let tmp: string;
let folderUri: string;
let projectRoot: string;
let child: ChildProcess;
let connection: MessageConnection;
let sender: RequestSender;
const changes: MemoryDidChangeParams[] = [];
let changeWaiters: (() => void)[] = [];
let factWaiters: ((params: FactsDidChangeParams) => void)[] = [];

/** Resolves at the next lecode/facts/didChange; call it before the request that causes one. */
function nextFactsChange(): Promise<FactsDidChangeParams> {
  return new Promise((resolve) => factWaiters.push(resolve));
}

/** Resolves at the next lecode/memory/didChange; call it before the request that causes one. */
function nextChange(): Promise<void> {
  return new Promise((resolve) => changeWaiters.push(resolve));
}

beforeAll(async () => {
  tmp = realpathSync(mkdtempSync(join(tmpdir(), "lecode-vscode-e2e-")));
  projectRoot = join(tmp, "project");
  mkdirSync(projectRoot);
  mkdirSync(join(tmp, "config"));
  folderUri = pathToFileURL(projectRoot).toString();
  const [command, ...args] = serverCommand();
  child = spawn(command, args, {
    env: { ...process.env, LECODE_CONFIG_DIR: join(tmp, "config") },
    stdio: ["pipe", "pipe", "inherit"],
  });
  connection = createMessageConnection(new StreamMessageReader(child.stdout!), new StreamMessageWriter(child.stdin!));
  connection.onNotification(Notifications.memoryDidChange, (params: MemoryDidChangeParams) => {
    changes.push(params);
    const waiters = changeWaiters;
    changeWaiters = [];
    waiters.forEach((resolve) => resolve());
  });
  connection.onNotification(Notifications.factsDidChange, (params: FactsDidChangeParams) => {
    const waiters = factWaiters;
    factWaiters = [];
    waiters.forEach((resolve) => resolve(params));
  });
  connection.onNotification("window/showMessage", () => undefined);
  connection.onNotification("window/logMessage", () => undefined);
  connection.listen();
  await connection.sendRequest("initialize", {
    processId: process.pid,
    rootUri: folderUri,
    capabilities: { workspace: { workspaceFolders: true, configuration: false } },
    workspaceFolders: [{ uri: folderUri, name: "project" }],
    initializationOptions: { memory: {}, notifications: ["lecode/facts/didChange", "lecode/memory/didChange"] },
  });
  await connection.sendNotification("initialized", {});
  sender = { sendRequest: (method, params) => connection.sendRequest(method, params) };
}, 30_000);

afterAll(async () => {
  if (connection) {
    await connection.sendRequest("shutdown").catch(() => undefined);
    await connection.sendNotification("exit").catch(() => undefined);
    connection.dispose();
  }
  child?.kill();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

function folders() {
  return [{ uri: folderUri, name: "project" }];
}

describe("against lecode-ls", () => {
  it("resolves the workspace folder to its project", async () => {
    const index = new ProjectIndex(sender, folders);
    await index.refresh();
    expect(index.problems).toEqual([]);
    expect(index.projects.map((p) => ({ root: p.projectRoot, folder: p.folderUri }))).toEqual([
      { root: projectRoot, folder: folderUri },
    ]);
  });

  it("opens a missing MEMORY.md as an empty file", async () => {
    const fs = new MemoryFileSystem(sender, { projectOfFolder: () => undefined });
    const uri = memoryUri("MEMORY.md", folderUri);
    expect(await fs.stat(uri)).toMatchObject({ type: vscode.FileType.File, size: 0 });
    expect(await fs.readFile(uri)).toEqual(new Uint8Array());
  });

  it("saves through the server, keeps the previous content in .bak, and reports the change", async () => {
    const index = new ProjectIndex(sender, folders);
    await index.refresh();
    const fs = new MemoryFileSystem(sender, index);
    const uri = memoryUri("MEMORY.md", folderUri);
    await fs.readFile(uri); // the editor has it open
    const events: vscode.FileChangeEvent[] = [];
    fs.onDidChangeFile((batch) => events.push(...batch));

    await fs.writeFile(uri, new TextEncoder().encode("# Memory\n- use tabs\n"));
    const changed = nextChange();
    await fs.writeFile(uri, new TextEncoder().encode("# Memory\n- use spaces — always\n"));
    await changed;
    fs.handleDidChange(changes.at(-1)!);

    expect(new TextDecoder().decode(await fs.readFile(uri))).toBe("# Memory\n- use spaces — always\n");
    const stat = await fs.stat(uri);
    expect(stat.size).toBe(new TextEncoder().encode("# Memory\n- use spaces — always\n").length);
    expect(stat.mtime).toBeGreaterThan(0);
    const store = index.projects[0].storePath;
    expect(readFileSync(join(store, "MEMORY.md.bak"), "utf8")).toBe("# Memory\n- use tabs\n");
    expect(events).toContainEqual({ type: vscode.FileChangeType.Changed, uri });
  });

  it("shows a new note in the tree under Notes", async () => {
    const index = new ProjectIndex(sender, folders);
    await index.refresh();
    const fs = new MemoryFileSystem(sender, index);
    await fs.writeFile(memoryUri("notes/build.md", folderUri), new TextEncoder().encode("Run `make`.\n"));
    const tree = new MemoryTreeProvider(sender, index, { notRunning: undefined });
    const roots = await tree.getChildren();
    const notes = roots.find((n): n is Extract<MemoryNode, { kind: "group" }> => n.kind === "group" && n.group === "notes");
    expect(notes?.files.map((f) => f.file)).toEqual(["notes/build.md"]);
    const memory = roots.find((n) => n.kind === "file" && n.file === "MEMORY.md");
    expect(memory).toMatchObject({ info: { file: "MEMORY.md" } });
  });

  it("finds a line by regular expression at its 1-based line", async () => {
    const result = await request(sender, Requests.memorySearch, { workspaceUri: folderUri, pattern: "spaces|make" });
    expect(result.hits).toEqual([
      { file: "MEMORY.md", line: 2, text: "- use spaces — always" },
      { file: "notes/build.md", line: 1, text: "Run `make`." },
    ]);
  });

  it("refuses an invalid note name with a sentence and a stable code, and no traceback", async () => {
    const fs = new MemoryFileSystem(sender, { projectOfFolder: () => undefined });
    const error = await fs.writeFile(memoryUri("notes/.hidden.md", folderUri), new Uint8Array()).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "FileNotFound", message: expect.stringContaining("starts with '.'") });
    expect((error as Error).message).not.toMatch(/Traceback|\.py/);
  });

  it("answers a bad pattern with invalid_pattern", async () => {
    const error = await request(sender, Requests.memorySearch, { workspaceUri: folderUri, pattern: "[" }).catch((e: unknown) => e);
    expect(serverErrorCode(error)).toBe("invalid_pattern");
  });

  it("applies {lecode: {memory}} settings sent as didChangeConfiguration", async () => {
    await connection.sendNotification("workspace/didChangeConfiguration", { settings: { lecode: { memory: { enabled: false } } } });
    const off = await request(sender, Requests.projectInfo, { workspaceUri: folderUri });
    await connection.sendNotification("workspace/didChangeConfiguration", { settings: { lecode: { memory: {} } } });
    const on = await request(sender, Requests.projectInfo, { workspaceUri: folderUri });
    expect([off.memoryEnabled, on.memoryEnabled]).toEqual([false, true]);
  });
});

describe("facts against lecode-ls", () => {
  const said = "We use tabs for indentation in this repo.";
  let sessionId: string;
  let factId: number;

  async function factsTree() {
    const index = new ProjectIndex(sender, folders);
    await index.refresh();
    return new FactsTreeProvider(sender, index, { notRunning: undefined });
  }

  it("imports records, snapshots a range and remembers a fact with it", async () => {
    const imported = await request(sender, Requests.sessionImport, {
      workspaceUri: folderUri,
      title: "indentation",
      records: [
        { role: "user", content: "Which indentation do we use?" },
        { role: "assistant", content: said },
        { role: "user", content: "Thanks." },
        { role: "assistant", content: "You're welcome." },
      ],
    });
    sessionId = imported.sessionId;
    const source = await request(sender, Requests.sessionSnapshot, { workspaceUri: folderUri, sessionId, startSeq: 2, endSeq: 2 });
    expect(source.seqs).toEqual([2]);
    const changed = nextFactsChange();
    const remembered = await request(sender, Requests.factsRemember, { workspaceUri: folderUri, text: said, source });
    factId = remembered.factId;
    expect(await changed).toMatchObject({ projectRoot });
  });

  it("lists the fact as a valid tree node with its source as a child", async () => {
    const tree = await factsTree();
    const [health, ...roots] = await tree.getChildren();
    expect(health).toMatchObject({ kind: "health", doctor: { facts: 1, byStatus: { valid: { count: 1, ids: [factId] } } } });
    expect(roots).toHaveLength(1);
    const node = roots[0] as Extract<FactNode, { kind: "fact" }>;
    expect(node.fact).toMatchObject({ factId, revision: 1, status: "valid", text: said, source: { sessionId, seqs: [2] } });
    const item = tree.getTreeItem(node);
    expect(item.description).toBe(`#${factId} r1 valid`);
    expect((await tree.getChildren(node)).map((child) => child.kind)).toEqual(["source"]);
  });

  it("recalls the fact into a transcript document that contains the cited message, selected", async () => {
    const recalled = await request(sender, Requests.factsRecall, { workspaceUri: folderUri, factId, limit: 1 });
    expect(recalled.status).toBe("valid");
    const { sessions } = await request(sender, Requests.sessionList, { workspaceUri: folderUri });
    const records = sessions.find((session) => session.sessionId === sessionId)?.records;
    expect(records).toBe(5);
    const uri = transcriptUri({ sessionId, ...contextRange(recalled.source!.seqs, records), workspaceUri: folderUri, factId });
    expect(uri.query).toContain("start=1&end=4");
    const transcripts = new TranscriptProvider(sender);
    const text = await transcripts.provideTextDocumentContent(vscode.Uri.parse(uri.toString()));
    const lines = text.split("\n");
    expect(lines[0]).toMatch(/^Untrusted evidence/);
    expect(text).toContain(`Fact #${factId}, revision 1: ${said}`);
    expect(text).toContain("Which indentation do we use?");
    const cited = transcripts.linesOf(uri, [2]);
    expect(lines.slice(cited!.start, cited!.end + 1)).toEqual(["── seq 2 · assistant · cited ──", said]);
  });

  it("refuses a correction against an old revision with stale_revision", async () => {
    const source = await request(sender, Requests.sessionSnapshot, { workspaceUri: folderUri, sessionId, startSeq: 3, endSeq: 3 });
    const error = await request(sender, Requests.factsCorrect, {
      workspaceUri: folderUri,
      factId,
      expectedRevision: 7,
      text: "We use spaces.",
      source,
    }).catch((e: unknown) => e);
    expect(serverErrorCode(error)).toBe("stale_revision");
    expect((error as Error).message).not.toMatch(/Traceback|\.py/);
  });

  it("forgets the fact: the tree is empty after the didChange refresh and the evidence is hidden", async () => {
    const tree = await factsTree();
    const redrawn = new Promise<void>((resolve) => tree.onDidChangeTreeData(() => resolve()));
    const changed = nextFactsChange();
    const forgotten = await request(sender, Requests.factsForget, { workspaceUri: folderUri, factId });
    expect(forgotten.forgotten).toBe(true);
    expect((await changed).generation).toBeGreaterThan(0);
    tree.refresh(); // what the extension does on lecode/facts/didChange
    await redrawn;
    const [health, ...rest] = await tree.getChildren();
    expect(health).toMatchObject({ kind: "health", doctor: { facts: 0 } }); // the forgotten fact is gone for good
    expect(rest).toEqual([{ kind: "message", text: expect.stringContaining("No facts yet"), folderUri }]);

    const transcripts = new TranscriptProvider(sender);
    const text = await transcripts.provideTextDocumentContent(transcriptUri({ sessionId, startSeq: 2, endSeq: 2, workspaceUri: folderUri }));
    expect(text).toContain("the source is hidden");
    expect(text).not.toContain(said);
  });
});
