/**
 * lecode's MCP server in a real VS Code that has the MCP server definition provider API (1.101+):
 * code-server 4.103.2 (VS Code 1.103.2, on a Node.js 22 from PyPI: `install-code-server.sh DIR
 * 4.103.2 22`) in headless Chromium through playwright-core, with the packaged .vsix installed by
 * code-server's own `--install-extension` and nothing else set up: no `.vscode/mcp.json`, no `mcp`
 * user setting, no `lecode.server.command` (the server is the one the extension brings).
 * Checked in the UI: "MCP: List Servers" lists "lecode memory" (the label src/mcp/provider.ts gives
 * one folder's server); its Start Server starts the bundled environment's `lecode_ls mcp --project
 * <folder>` (the MCP SDK installed on that first use); the server's output channel in VS Code
 * ("MCP: lecode memory") shows the server's start line for the folder and the test's store, and
 * "Discovered N tools" with N the number of tools that server lists to an MCP client of the
 * test's own. Everything waits on conditions in the page, on disk or in /proc; screenshots go to
 * $LECODE_SCREENSHOTS (default test-results/vscode-mcp).
 *
 * Needs: $LECODE_CODE_SERVER_MCP (a code-server of VS Code 1.101 or newer: DIR/bin/code-server
 * after the install above), lecode.vsix (`npm run package`), Chromium (/usr/bin/chromium or
 * $CHROMIUM_PATH), Python 3.11+ with venv, git, and the repository's .venv (the test's own client).
 */
// covers issue 28, item 4 (agent mode lists lecode's memory with no set-up) in a real VS Code
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { type BrowserContext, type Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type Folders, WAIT, environment, installVsix, makeFolders, openWorkbench, startCodeServer as startOn, until } from "./harness";

const HERE = fileURLToPath(new URL(".", import.meta.url));
const EXTENSION = join(HERE, "..", "..");
const REPO = join(EXTENSION, "..", "..");
const VSIX = join(EXTENSION, "lecode.vsix");
const CODE_SERVER = process.env.LECODE_CODE_SERVER_MCP ?? "";
const SHOTS = process.env.LECODE_SCREENSHOTS ?? join(EXTENSION, "test-results", "vscode-mcp");
const VERSION = JSON.parse(readFileSync(join(EXTENSION, "package.json"), "utf8")).version as string;
/** The label src/mcp/provider.ts gives the server of a window with one folder. */
const LABEL = "lecode memory";

let folders: Folders;
let tmp: string;
let project: string;
let configDir: string;
let userData: string;
let extensionsDir: string;
let home: string;
let codeServer: ChildProcess | undefined;
let port: number;
let context: BrowserContext;
let page: Page;

/** Wait until `check` returns a value other than undefined (a condition on disk or in a log). */
async function shot(name: string): Promise<void> {
  mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: join(SHOTS, `${name}.png`) });
}

/** VS Code's version inside code-server ("4.103.2 <commit> with Code 1.103.2"). */
function codeVersion(): [number, number] {
  const found = /with Code (\d+)\.(\d+)/.exec(spawnSync(CODE_SERVER, ["--version"], { encoding: "utf8" }).stdout ?? "");
  return found ? [Number(found[1]), Number(found[2])] : [0, 0];
}

/** The process whose command line starts with `argv`, if one runs. */
function processOf(argv: string[]): string | undefined {
  const wanted = argv.join("\0");
  return readdirSync("/proc").find((pid) => {
    try {
      return /^\d+$/.test(pid) && readFileSync(join("/proc", pid, "cmdline"), "utf8").startsWith(wanted);
    } catch {
      return false;
    }
  });
}

/**
 * The names of the tools `lecode-ls mcp --project <project>` of the repository's .venv lists to
 * a plain MCP client (newline-delimited JSON-RPC on stdio), with the store VS Code's server uses.
 */
async function toolsListed(): Promise<string[]> {
  const child = spawn(join(REPO, ".venv", "bin", "python"), ["-m", "lecode_ls", "mcp", "--project", project], {
    env: { ...process.env, LECODE_CONFIG_DIR: configDir, HOME: home },
    stdio: ["pipe", "pipe", "ignore"],
  });
  const answers = new Map<number, (result: unknown) => void>();
  createInterface({ input: child.stdout }).on("line", (line) => {
    const message = JSON.parse(line) as { id?: number; result?: unknown; error?: unknown };
    if (message.id !== undefined) answers.get(message.id)?.(message.result ?? message.error);
  });
  let next = 0;
  const request = (method: string, params: unknown) =>
    new Promise<unknown>((resolve) => {
      const id = ++next;
      answers.set(id, resolve);
      child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`);
    });
  await request("initialize", { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "lecode-test", version: "0" } });
  child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })}\n`);
  const listed = (await request("tools/list", {})) as { tools: { name: string }[] };
  child.stdin.end();
  await new Promise((resolve) => child.once("exit", resolve));
  return listed.tools.map((tool) => tool.name);
}

async function startCodeServer(): Promise<void> {
  const started = await startOn({ binary: CODE_SERVER, userData, extensionsDir, project, env: environment(folders) });
  codeServer = started.process;
  port = started.port;
}

const quickPick = (text: string | RegExp) => page.locator(".quick-input-list .monaco-list-row", { hasText: text }).first();

/** Runs "MCP: List Servers" from the command palette and waits for lecode's server in it. */
async function listServers() {
  await page.keyboard.press("F1");
  await page.keyboard.type("MCP: List Servers");
  await quickPick("MCP: List Servers").waitFor({ timeout: WAIT });
  await page.keyboard.press("Enter");
  const server = quickPick(LABEL);
  await server.waitFor({ timeout: WAIT });
  return server;
}

describe("lecode's MCP server in a VS Code with the MCP server definition provider API", () => {
  beforeAll(async () => {
    if (!existsSync(CODE_SERVER)) {
      throw new Error(
        `no code-server at $LECODE_CODE_SERVER_MCP (${JSON.stringify(CODE_SERVER)}): run test/vscode/install-code-server.sh DIR 4.103.2 22 and set it to DIR/bin/code-server`,
      );
    }
    const [major, minor] = codeVersion();
    if (major < 1 || (major === 1 && minor < 101)) {
      throw new Error(`$LECODE_CODE_SERVER_MCP is VS Code ${major}.${minor}: the MCP server definition provider API needs 1.101 or newer`);
    }
    if (!existsSync(VSIX)) throw new Error(`no ${VSIX}: run npm run package first`);
    folders = makeFolders("lecode-code-server-mcp-");
    ({ tmp, project, configDir, userData, extensionsDir, home } = folders);
    writeFileSync(join(project, "README.md"), "# project\n");
    writeFileSync(join(project, "app.py"), 'GREETING = "hello"\nprint(GREETING)\n');
    const git = (...args: string[]) => expect(spawnSync("git", args, { cwd: project, encoding: "utf8" }).status).toBe(0);
    git("init", "-q", "-b", "main");
    git("add", ".");
    git("-c", "user.name=Test", "-c", "user.email=test@example.invalid", "commit", "-q", "-m", "A small project");
    mkdirSync(join(userData, "User"), { recursive: true });
    writeFileSync(
      join(userData, "User", "settings.json"),
      JSON.stringify({
        "workbench.startupEditor": "none",
        "workbench.tips.enabled": false,
        "security.workspace.trust.enabled": false,
        "telemetry.telemetryLevel": "off",
        "extensions.autoCheckUpdates": false,
        "extensions.autoUpdate": false,
        "update.mode": "none",
      }),
    );
    const installed = installVsix(CODE_SERVER, folders, VSIX);
    expect(installed.status, installed.stderr).toBe(0);
    await startCodeServer();
    ({ context, page } = await openWorkbench(folders, port));
    await page.locator(".monaco-workbench").waitFor({ timeout: WAIT });
  }, 300_000);

  afterEach(async (test) => {
    if (test.task.result?.state === "fail" && page !== undefined) {
      await shot(`failed-${test.task.name.replace(/\W+/g, "-")}`);
    }
  });

  afterAll(async () => {
    await context?.close();
    codeServer?.kill();
    if (tmp && process.env.LECODE_KEEP !== "1") rmSync(tmp, { recursive: true, force: true });
  });

  it("lists lecode memory in MCP: List Servers, with no mcp.json and no mcp setting", async () => {
    const server = await listServers();
    await shot("1-listed");
    expect(existsSync(join(project, ".vscode", "mcp.json"))).toBe(false);
    expect(existsSync(join(userData, "User", "mcp.json"))).toBe(false);
    expect(Object.keys(JSON.parse(readFileSync(join(userData, "User", "settings.json"), "utf8")) as object).filter((key) => /mcp/i.test(key))).toEqual([]);
    expect(await server.textContent()).toContain(LABEL);
    await page.keyboard.press("Escape");
  });

  it("starts the bundled environment's lecode-ls mcp for the folder, and VS Code discovers the memory tools it lists", { timeout: 900_000 }, async () => {
    const server = await listServers();
    await server.click();
    const start = quickPick(/Start Server/);
    await start.waitFor({ timeout: WAIT });
    await shot("2-actions");
    await start.click();
    // The process is the bundled environment's, set up on first use (the MCP SDK with it).
    const python = join(userData, "User", "globalStorage", "lecode.lecode", "server", VERSION, "bin", "python");
    await until("VS Code's lecode-ls mcp process", () => processOf([python, "-m", "lecode_ls", "mcp", "--project", project]), 600_000);
    // VS Code's output channel of the server ("MCP: lecode memory", which Start Server opens in
    // the Output panel; code-server keeps a window's logs in the browser, not on disk) says what
    // it discovered.
    // (VS Code draws spaces as no-break spaces: \s matches them.)
    const lines = page.locator(".part.panel .view-lines", { hasText: /Discovered\s\d+\stools/ }).first();
    await lines.waitFor({ timeout: WAIT });
    const shown = ((await lines.textContent()) ?? "").replace(/\u00a0/g, " ");
    const discovered = Number(/Discovered (\d+) tools/.exec(shown)?.[1]);
    // The server's own line on stderr, shown there too: it serves the folder, with the test's store.
    expect(shown).toContain(`project ${project}`);
    expect(shown).toContain(`config dir ${configDir} (LECODE_CONFIG_DIR)`);
    // As many tools as the same server lists to a plain MCP client: the memory tools.
    const names = await toolsListed();
    expect(names).toContain("memory_read");
    expect(names).toContain("memory_search");
    expect(discovered).toBe(names.length);
    await shot("3-discovered");
  });
});
