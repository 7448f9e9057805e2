/**
 * What the tests in a real code-server share: waiting on a condition, a free port, and starting
 * code-server on a folder with the extensions of a test's own (codeServer.vscode.ts,
 * mcpServers.vscode.ts).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createServer } from "node:net";

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
