/**
 * The server the extension brings: a private Python environment, made on first start from the
 * lecode-ls wheel inside the .vsix, and reused until the extension's version changes.
 *
 * Like ruff-vscode and Microsoft's vscode-python-tools-extension-template, the extension ships the
 * server's own code; unlike them it cannot vendor the dependencies (pydantic and apsw have
 * compiled parts per platform and Python version), so they come from the package index the
 * person's pip or uv already uses. With uv on the machine: `uv venv` (uv finds, or fetches, a
 * Python 3.11+) and `uv pip install`; otherwise a Python 3.11+ found on PATH: `python -m venv`
 * and pip.
 *
 * The environment is built in a temporary folder and renamed into place only once lecode-ls and
 * its dependencies import from it, so a half-made environment is never used, and two
 * windows starting at once both end with one complete environment. The server runs as
 * `<env python> -m lecode_ls`, which does not depend on the folder's name (console scripts would
 * hold the temporary path).
 */
import { randomBytes } from "node:crypto";
import { promises as fs } from "node:fs";
import * as path from "node:path";
import {
  type Platform,
  type PythonCandidate,
  VERSION_PROBE,
  displayCommand,
  environmentPython,
  pathCandidates,
  pythonCandidates,
  supportedPython,
  uvFallbacks,
} from "./platform";
import type { RunResult, Runner } from "./run";

/** Imports what the server needs to serve (pygls, pydantic, apsw, httpx): a check of the install. */
export const IMPORT_CHECK = "import lecode_ls.cli, lecode_ls.server.wiring";

/** What `lecode-ls mcp` needs besides: the wheel's `mcp` extra (the MCP SDK), installed only
 *  when VS Code's agent mode first starts that server (bundledMcpServer). */
export const MCP_IMPORT_CHECK = "import mcp.server";

/** Where the .vsix keeps the wheel, relative to the extension's folder. */
export const WHEEL_FOLDER = "server";
/** Written last into a finished environment. */
export const STAMP = "lecode-env.json";
/** A setup step that takes longer is stopped (a hung index, a stuck download). */
export const STEP_TIMEOUT_MS = 10 * 60 * 1000;
/** A temporary folder older than this is a leftover of a setup that died, and is removed. */
const STALE_MS = 60 * 60 * 1000;

export interface InstallContext {
  platform: Platform;
  /** The extension host's environment (PATH, HOME, proxy and index settings for pip and uv). */
  env: NodeJS.ProcessEnv;
  /** The extension's folder (holds `server/lecode_ls-*.whl`). */
  extensionDir: string;
  /** The extension's global storage folder. */
  storageDir: string;
  /** The extension's version: a new version makes a new environment. */
  version: string;
  run: Runner;
  /** Whether a file exists (a seam for PATH search on another platform's paths). */
  isFile(file: string): Promise<boolean>;
  /** A short line for the progress notification. */
  progress(message: string): void;
  log(line: string): void;
}

/** Setting up failed; `message` says what the person can do. */
export class InstallError extends Error {}

/** How the environment is made: with uv, or with a Python interpreter. */
export type Tool = { kind: "uv"; uv: string } | { kind: "python"; python: PythonCandidate; version: string };

/** The commands that make an environment in `envDir` and install `wheel` into it, in order. */
export function installSteps(tool: Tool, wheel: string, envDir: string, platform: Platform): string[][] {
  const python = environmentPython(envDir, platform);
  if (tool.kind === "uv") {
    return [
      [tool.uv, "venv", "--python", ">=3.11", envDir],
      [tool.uv, "pip", "install", "--compile-bytecode", "--python", python, wheel],
    ];
  }
  return [
    [tool.python.command, ...tool.python.args, "-m", "venv", envDir],
    [python, "-m", "pip", "install", "--disable-pip-version-check", "--no-input", wheel],
  ];
}

/** The command that starts the server from an environment. */
export function serverCommandIn(envDir: string, platform: Platform): string[] {
  return [environmentPython(envDir, platform), "-m", "lecode_ls"];
}

export const realIsFile = async (file: string): Promise<boolean> => {
  try {
    return (await fs.stat(file)).isFile();
  } catch {
    return false;
  }
};

/** The first of `files` that exists. */
async function firstFile(files: readonly string[], isFile: (file: string) => Promise<boolean>): Promise<string | undefined> {
  for (const file of files) {
    if (await isFile(file)) {
      return file;
    }
  }
  return undefined;
}

/** The newest usable way to make the environment: uv, else a Python 3.11+; with what was seen. */
export async function findTool(ctx: InstallContext): Promise<{ tool?: Tool; tooOld: string[] }> {
  const uv = await firstFile([...pathCandidates("uv", ctx.env, ctx.platform), ...uvFallbacks(ctx.env, ctx.platform)], ctx.isFile);
  if (uv !== undefined) {
    return { tool: { kind: "uv", uv }, tooOld: [] };
  }
  const tooOld: string[] = [];
  // The probe runs in the storage folder, which VS Code has not made yet on a first start: a
  // spawn with a missing cwd fails as if the program were not there ("found neither on PATH").
  await fs.mkdir(ctx.storageDir, { recursive: true });
  for (const candidate of pythonCandidates(ctx.platform)) {
    const command = await firstFile(pathCandidates(candidate.command, ctx.env, ctx.platform), ctx.isFile);
    if (command === undefined) {
      continue;
    }
    const python = { command, args: candidate.args };
    const probe = await ctx.run(command, [...candidate.args, "-c", VERSION_PROBE], {
      cwd: ctx.storageDir,
      env: ctx.env,
      timeoutMs: 30_000,
    });
    const version = probe.stdout.trim();
    if (probe.code !== 0) {
      continue; // the Windows Store's python.exe stub, a broken shim: not a Python
    }
    if (supportedPython(version)) {
      return { tool: { kind: "python", python, version }, tooOld };
    }
    tooOld.push(`${displayCommand([command, ...candidate.args], ctx.platform)} is Python ${version}`);
  }
  return { tooOld };
}

/** The sentence for a machine with neither uv nor Python 3.11+. */
export function nothingToInstallWith(tooOld: readonly string[]): string {
  const seen = tooOld.length > 0 ? ` (${tooOld.join("; ")})` : "";
  return (
    `lecode needs Python 3.11 or newer, or uv, to set up its language server, and found neither on PATH${seen}. ` +
    "Install uv (https://docs.astral.sh/uv/getting-started/installation/) or Python 3.11+ " +
    '(https://www.python.org/downloads/), then run "lecode: Restart Server". Or set ' +
    "lecode.server.command to a lecode-ls you installed yourself."
  );
}

/** The bundled wheel, or an error naming the folder that lacks it. */
async function bundledWheel(extensionDir: string): Promise<string> {
  const folder = path.join(extensionDir, WHEEL_FOLDER);
  const names = await fs.readdir(folder).catch(() => [] as string[]);
  const wheel = names.filter((name) => /^lecode_ls-.+\.whl$/.test(name)).sort().at(-1);
  if (wheel === undefined) {
    throw new InstallError(
      `This build of the extension has no lecode-ls wheel in ${folder}. Set lecode.server.command to a lecode-ls you installed, then run "lecode: Restart Server".`,
    );
  }
  return path.join(folder, wheel);
}

interface Stamp {
  version: string;
  wheel: string;
}

async function readStamp(envDir: string): Promise<Stamp | undefined> {
  try {
    return JSON.parse(await fs.readFile(path.join(envDir, STAMP), "utf8")) as Stamp;
  } catch {
    return undefined;
  }
}

/** A finished environment of this version in `envDir`. */
async function usable(ctx: InstallContext, envDir: string): Promise<boolean> {
  const stamp = await readStamp(envDir);
  return stamp?.version === ctx.version && (await ctx.isFile(environmentPython(envDir, ctx.platform)));
}

function lastLines(result: RunResult): string {
  // Debian wraps its venv message: the last lines, as one sentence without its final stop.
  const text = (result.stderr.trim() || result.stdout.trim())
    .split(/\r?\n/)
    .slice(-3)
    .join(" ")
    .replace(/\.$/, "");
  return text === "" ? "" : `: ${text}`;
}

/** The person's way out of a failed step, where one is known. */
function hint(result: RunResult): string {
  const output = `${result.stderr}\n${result.stdout}`;
  if (/ensurepip is not\s+available|No module named venv/.test(output)) {
    return " Debian and Ubuntu keep venv apart: install python3-venv (sudo apt install python3-venv), or install uv.";
  }
  return "";
}

async function step(ctx: InstallContext, command: string[], cwd: string): Promise<void> {
  ctx.log(`$ ${displayCommand(command, ctx.platform)}`);
  const result = await ctx.run(command[0], command.slice(1), {
    cwd,
    env: ctx.env,
    timeoutMs: STEP_TIMEOUT_MS,
    onLine: (line) => ctx.log(line),
  });
  if (result.code !== 0) {
    const how = result.failure ?? `exited with ${result.code}`;
    throw new InstallError(
      `Setting up lecode-ls failed: ${displayCommand(command, ctx.platform)} ${how}${lastLines(result)}.${hint(result)} The "lecode" output has the whole log; run "lecode: Restart Server" to try again.`,
    );
  }
}

/** Remove other versions' environments and temporary folders that a dead setup left. */
async function removeOld(root: string, keep: string): Promise<void> {
  const names = await fs.readdir(root).catch(() => [] as string[]);
  for (const name of names) {
    const full = path.join(root, name);
    if (full === keep) {
      continue;
    }
    if (name.includes(".tmp-")) {
      const modified = (await fs.stat(full).catch(() => undefined))?.mtimeMs;
      if (modified === undefined || Date.now() - modified < STALE_MS) {
        continue; // perhaps another window's setup in progress
      }
    }
    await fs.rm(full, { recursive: true, force: true }).catch(() => undefined);
  }
}

/** The command of this version's finished environment, if there is one. */
export async function installedServer(ctx: InstallContext): Promise<string[] | undefined> {
  const envDir = path.join(ctx.storageDir, "server", ctx.version);
  return (await usable(ctx, envDir)) ? serverCommandIn(envDir, ctx.platform) : undefined;
}

/**
 * The command that starts the bundled server, making its environment first when this version
 * has none. Throws InstallError with a sentence for the person.
 */
export async function bundledServer(ctx: InstallContext): Promise<string[]> {
  const root = path.join(ctx.storageDir, "server");
  const envDir = path.join(root, ctx.version);
  const existing = await installedServer(ctx);
  if (existing !== undefined) {
    return existing;
  }
  const wheel = await bundledWheel(ctx.extensionDir);
  ctx.progress("1/3: finding uv or Python 3.11+");
  const { tool, tooOld } = await findTool(ctx);
  if (tool === undefined) {
    throw new InstallError(nothingToInstallWith(tooOld));
  }
  await fs.mkdir(root, { recursive: true });
  const temporary = path.join(root, `${ctx.version}.tmp-${process.pid}-${randomBytes(4).toString("hex")}`);
  try {
    const [create, install] = installSteps(tool, wheel, temporary, ctx.platform);
    ctx.progress(tool.kind === "uv" ? "2/3: making an environment with uv" : `2/3: making an environment with Python ${tool.version}`);
    await step(ctx, create, root);
    ctx.progress("3/3: installing lecode-ls (a minute or two)");
    await step(ctx, install, root);
    // `lecode-ls --version` loads none of the dependencies: import what serving needs instead.
    await step(ctx, [environmentPython(temporary, ctx.platform), "-c", IMPORT_CHECK], root);
    const stamp: Stamp = { version: ctx.version, wheel: path.basename(wheel) };
    await fs.writeFile(path.join(temporary, STAMP), JSON.stringify(stamp));
    try {
      await fs.rename(temporary, envDir);
    } catch {
      // Another window finished first (the rename target exists): use its environment.
      if (!(await usable(ctx, envDir))) {
        await fs.rm(envDir, { recursive: true, force: true });
        await fs.rename(temporary, envDir);
      }
    }
  } finally {
    await fs.rm(temporary, { recursive: true, force: true }).catch(() => undefined);
  }
  await removeOld(root, envDir);
  return serverCommandIn(envDir, ctx.platform);
}

/** The step that installs the wheel's `mcp` extra into an existing environment. */
export function mcpExtraStep(tool: Tool, wheel: string, envDir: string, platform: Platform): string[] {
  const install = installSteps(tool, wheel, envDir, platform)[1];
  return [...install.slice(0, -1), `${wheel}[mcp]`];
}

/**
 * The bundled server's command for `lecode-ls mcp`: the environment of bundledServer, with the
 * wheel's `mcp` extra installed into it first when it lacks the SDK (a language server that uses
 * the environment meanwhile keeps running: the extra only adds packages). Throws InstallError.
 */
export async function bundledMcpServer(ctx: InstallContext): Promise<string[]> {
  const command = await bundledServer(ctx);
  const python = command[0];
  const envDir = path.dirname(path.dirname(python)); // <env>/bin/python, <env>\Scripts\python.exe
  const check = await ctx.run(python, ["-c", MCP_IMPORT_CHECK], { cwd: envDir, env: ctx.env, timeoutMs: STEP_TIMEOUT_MS, onLine: () => undefined });
  if (check.code === 0) {
    return command;
  }
  const wheel = await bundledWheel(ctx.extensionDir);
  const { tool, tooOld } = await findTool(ctx);
  if (tool === undefined) {
    throw new InstallError(nothingToInstallWith(tooOld));
  }
  ctx.progress("installing the MCP SDK for agent mode (a minute)");
  await step(ctx, mcpExtraStep(tool, wheel, envDir, ctx.platform), envDir);
  await step(ctx, [python, "-c", MCP_IMPORT_CHECK], envDir);
  return command;
}
