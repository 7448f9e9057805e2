/**
 * Running a setup step (uv, Python, pip) as an argument list, without a shell, capturing its
 * output for the log and for the message when it fails.
 *
 * Windows cannot start a `.bat` or `.cmd` file (a pyenv-win shim, say) without cmd.exe, so such a
 * step goes through `cmd.exe /d /s /c` with every part escaped for cmd.exe and for the C runtime's
 * argument parsing (the scheme cross-spawn uses); `windowsCommand` is that rule, tested here.
 */
import { spawn } from "node:child_process";
import { type Platform, pathOf } from "./platform";

export interface RunResult {
  /** The exit code; null when the process could not start, was killed or timed out. */
  code: number | null;
  stdout: string;
  stderr: string;
  /** Why the process did not run to an exit code (spawn failure, timeout). */
  failure?: string;
}

export interface RunOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** The step is killed after this long. */
  timeoutMs: number;
  /** Each line of output, as it comes. */
  onLine?: (line: string) => void;
}

export type Runner = (command: string, args: readonly string[], options: RunOptions) => Promise<RunResult>;

/** cmd.exe's special characters, escaped with `^`. */
const CMD_META = /([()\][%!^"`<>&|;, *?])/g;

function escapeForCmd(argument: string): string {
  // The C runtime's rule first: backslashes before a quote are doubled and the quote escaped;
  // trailing backslashes are doubled since a closing quote follows. Then cmd.exe's metacharacters.
  const quoted = `"${argument.replace(/(\\*)"/g, '$1$1\\"').replace(/(\\*)$/, "$1$1")}"`;
  return quoted.replace(CMD_META, "^$1");
}

/** How to run `command args` on a platform: directly, or through cmd.exe for a batch file. */
export function windowsCommand(
  command: string,
  args: readonly string[],
  platform: Platform,
): { command: string; args: string[]; verbatim: boolean } {
  const extension = pathOf(platform).extname(command).toLowerCase();
  if (platform !== "win32" || (extension !== ".bat" && extension !== ".cmd")) {
    return { command, args: [...args], verbatim: false };
  }
  const line = [command.replace(CMD_META, "^$1"), ...args.map(escapeForCmd)].join(" ");
  return { command: "cmd.exe", args: ["/d", "/s", "/c", `"${line}"`], verbatim: true };
}

/** The real Runner: node's spawn, no shell. */
export const runProcess: Runner = (command, args, options) =>
  new Promise((resolve) => {
    const how = windowsCommand(command, args, process.platform);
    let stdout = "";
    let stderr = "";
    let settled = false;
    const finish = (result: RunResult): void => {
      if (!settled) {
        settled = true;
        clearTimeout(timer);
        resolve(result);
      }
    };
    const child = spawn(how.command, how.args, {
      cwd: options.cwd,
      env: options.env,
      windowsHide: true,
      windowsVerbatimArguments: how.verbatim,
      stdio: ["ignore", "pipe", "pipe"],
    });
    const timer = setTimeout(() => {
      child.kill();
      finish({ code: null, stdout, stderr, failure: `timed out after ${Math.round(options.timeoutMs / 1000)} s` });
    }, options.timeoutMs);
    const collect = (append: (text: string) => void) => (chunk: Buffer) => {
      const text = chunk.toString("utf8");
      append(text);
      for (const line of text.split(/\r?\n/)) {
        if (line.trim() !== "") {
          options.onLine?.(line);
        }
      }
    };
    child.stdout.on("data", collect((text) => (stdout += text)));
    child.stderr.on("data", collect((text) => (stderr += text)));
    child.on("error", (error) => finish({ code: null, stdout, stderr, failure: error.message }));
    child.on("close", (code) => finish({ code, stdout, stderr }));
  });
