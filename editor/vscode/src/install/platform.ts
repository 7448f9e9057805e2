/**
 * What differs per platform when the extension finds Python or uv and runs the server's
 * environment: executable names and PATH search (PATHEXT on Windows), where a virtual
 * environment keeps its interpreter, and how a command is quoted when it is shown to a person.
 *
 * Every function takes the platform and the environment as arguments (never `process`), so the
 * Windows and macOS values are tested on Linux.
 */
import * as path from "node:path";

export type Platform = NodeJS.Platform;

/** The path module of a platform: `path.win32` on Windows, `path.posix` elsewhere. */
export function pathOf(platform: Platform): path.PlatformPath {
  return platform === "win32" ? path.win32 : path.posix;
}

/** The interpreter of a virtual environment: `Scripts\python.exe` on Windows, `bin/python` elsewhere. */
export function environmentPython(envDir: string, platform: Platform): string {
  return platform === "win32"
    ? path.win32.join(envDir, "Scripts", "python.exe")
    : path.posix.join(envDir, "bin", "python");
}

/** The value of PATH; Windows spells the variable in any case (`Path` is usual). */
function variable(env: NodeJS.ProcessEnv, name: string, platform: Platform): string | undefined {
  if (platform !== "win32") {
    return env[name];
  }
  const key = Object.keys(env).find((k) => k.toUpperCase() === name);
  return key === undefined ? undefined : env[key];
}

/**
 * Every file a program name may be on PATH, in search order: each PATH folder with the name,
 * and on Windows the name with each PATHEXT extension (`.EXE`, `.CMD`, ...) when it has none.
 */
export function pathCandidates(name: string, env: NodeJS.ProcessEnv, platform: Platform): string[] {
  const p = pathOf(platform);
  const separator = platform === "win32" ? ";" : ":";
  const folders = (variable(env, "PATH", platform) ?? "")
    .split(separator)
    // Windows PATH entries may be quoted; an empty entry is no folder we search.
    .map((folder) => (platform === "win32" ? folder.replace(/^"(.*)"$/, "$1") : folder))
    .filter((folder) => folder !== "");
  let names = [name];
  if (platform === "win32" && p.extname(name) === "") {
    const extensions = (variable(env, "PATHEXT", platform) ?? ".COM;.EXE;.BAT;.CMD").split(";").filter((e) => e !== "");
    names = extensions.map((extension) => name + extension.toLowerCase());
  }
  return folders.flatMap((folder) => names.map((file) => p.join(folder, file)));
}

/** Where uv's own installer puts uv when the folder is not on the PATH VS Code was started with. */
export function uvFallbacks(env: NodeJS.ProcessEnv, platform: Platform): string[] {
  const p = pathOf(platform);
  const home = platform === "win32" ? variable(env, "USERPROFILE", platform) : env.HOME;
  if (home === undefined || home === "") {
    return [];
  }
  const exe = platform === "win32" ? "uv.exe" : "uv";
  return [p.join(home, ".local", "bin", exe), p.join(home, ".cargo", "bin", exe)];
}

/** A way to run a Python interpreter: the program and the arguments that select it. */
export interface PythonCandidate {
  command: string;
  args: string[];
}

/**
 * The Python interpreters to try, best first. On Windows the `py` launcher picks the newest
 * Python 3 (`py -3`); `python.exe` may be the Microsoft Store stub, so it comes last. Elsewhere
 * the versioned names come first, since `python3` may be an older system Python.
 */
export function pythonCandidates(platform: Platform): PythonCandidate[] {
  if (platform === "win32") {
    return [
      { command: "py", args: ["-3"] },
      { command: "python3", args: [] },
      { command: "python", args: [] },
    ];
  }
  return ["python3.14", "python3.13", "python3.12", "python3.11", "python3", "python"].map((command) => ({
    command,
    args: [],
  }));
}

/** Whether a `major.minor` string (what the version probe prints) is Python 3.11 or newer. */
export function supportedPython(version: string): boolean {
  const match = /^(\d+)\.(\d+)/.exec(version.trim());
  if (match === null) {
    return false;
  }
  const [major, minor] = [Number(match[1]), Number(match[2])];
  return major > 3 || (major === 3 && minor >= 11);
}

/** Prints `major.minor` of the interpreter it runs in. */
export const VERSION_PROBE = "import sys; print('%d.%d' % sys.version_info[:2])";

/**
 * One argument as a person would type it in the platform's usual shell (POSIX sh, or cmd.exe and
 * PowerShell on Windows), for messages and the log. Commands themselves are run without a shell,
 * as argument lists, so nothing here affects what runs.
 */
export function quoteArgument(argument: string, platform: Platform): string {
  if (argument !== "" && /^[\w@%+=:,./\\-]+$/.test(argument)) {
    return argument;
  }
  if (platform === "win32") {
    // Double quotes; an embedded quote is doubled, which both cmd.exe and PowerShell accept.
    return `"${argument.replace(/"/g, '""')}"`;
  }
  return `'${argument.replace(/'/g, `'"'"'`)}'`;
}

/** A whole command line for display: `quoteArgument` of each part, joined by spaces. */
export function displayCommand(command: readonly string[], platform: Platform): string {
  return command.map((part) => quoteArgument(part, platform)).join(" ");
}
