/**
 * What the tests in a real code-server share: waiting on a condition, a free port, and starting
 * code-server on a folder with the extensions of a test's own (codeServer.vscode.ts,
 * mcpServers.vscode.ts).
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BrowserContext, type Page, chromium } from "playwright-core";
import { CHROMIUM_ARGS } from "../webview/page";

export const WAIT = 120_000;

/** Polls `check` every 100 ms until it gives a value; a hang guard of `timeout` ms. */
export async function until<T>(what: string, check: () => T | undefined, timeout = WAIT): Promise<T> {
  const deadline = Date.now() + timeout;
  for (;;) {
    const value = check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, "127.0.0.1", () => {
      const { port: free } = server.address() as { port: number };
      server.close(() => resolve(free));
    });
  });
}

export interface CodeServerRun {
  binary: string;
  userData: string;
  extensionsDir: string;
  project: string;
  env: NodeJS.ProcessEnv;
}

/** Starts code-server on a free loopback port, with no auth, telemetry, updates or trust prompt,
 * and resolves once it listens (rejects if it exits first). */
export async function startCodeServer(run: CodeServerRun): Promise<{ process: ChildProcess; port: number }> {
  const port = await freePort();
  const child = spawn(
    run.binary,
    [
      "--auth", "none",
      "--bind-addr", `127.0.0.1:${port}`,
      "--user-data-dir", run.userData,
      "--extensions-dir", run.extensionsDir,
      "--disable-telemetry",
      "--disable-update-check",
      "--disable-workspace-trust",
      "--disable-getting-started-override",
      run.project,
    ],
    { env: run.env, stdio: ["ignore", "pipe", "pipe"] },
  );
  await new Promise<void>((resolve, reject) => {
    let output = "";
    const seen = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes("HTTP server listening on")) resolve();
    };
    child.stdout?.on("data", seen);
    child.stderr?.on("data", seen);
    child.once("exit", (code) => reject(new Error(`code-server exited (${code}): ${output}`)));
  });
  return { process: child, port };
}

/** The folders of one run: the project opened, the store (LECODE_CONFIG_DIR), code-server's
 * user data and extensions, and a fresh HOME; all under one temp folder. */
export interface Folders {
  tmp: string;
  project: string;
  configDir: string;
  userData: string;
  extensionsDir: string;
  home: string;
}

export function makeFolders(prefix: string): Folders {
  const tmp = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  const folders = {
    tmp,
    project: join(tmp, "project"),
    configDir: join(tmp, "config"),
    userData: join(tmp, "user-data"),
    extensionsDir: join(tmp, "extensions"),
    home: join(tmp, "home"),
  };
  for (const dir of [folders.project, folders.configDir, folders.userData, folders.extensionsDir, folders.home]) mkdirSync(dir);
  return folders;
}

/** code-server's environment: a fresh HOME (no configuration of the person's agents is read),
 * the test's store, the person's config and cache through XDG_*; no provider key. */
export function environment(folders: Folders, path?: string): NodeJS.ProcessEnv {
  const realHome = process.env.HOME ?? tmpdir();
  const { OPENAI_API_KEY: _key, ...rest } = process.env;
  return {
    ...rest,
    ...(path === undefined ? {} : { PATH: path }),
    HOME: folders.home,
    XDG_CONFIG_HOME: process.env.XDG_CONFIG_HOME ?? join(realHome, ".config"),
    XDG_CACHE_HOME: process.env.XDG_CACHE_HOME ?? join(realHome, ".cache"),
    LECODE_CONFIG_DIR: folders.configDir,
  };
}

/** Installs the packaged extension into the run's extensions folder; the error if it failed. */
export function installVsix(binary: string, folders: Folders, vsix: string): { status: number | null; stderr: string } {
  return spawnSync(binary, ["--user-data-dir", folders.userData, "--extensions-dir", folders.extensionsDir, "--install-extension", vsix], {
    encoding: "utf8",
  });
}

/** Headless Chromium on code-server's page for the project. */
export async function openWorkbench(
  folders: Folders,
  port: number,
  options: { permissions?: string[] } = {},
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await chromium.launchPersistentContext(mkdtempSync(join(folders.tmp, "chromium-")), {
    executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: 1400, height: 900 },
    ...options,
  });
  const page = context.pages()[0] ?? (await context.newPage());
  await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(folders.project)}`);
  return { context, page };
}
