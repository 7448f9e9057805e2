/**
 * Install and go, in the host: with `lecode.server.command` left empty, the built extension makes
 * the server's environment from the wheel in `server/` (`npm run bundle:server`) with the real
 * uv on this machine, under a progress notification, and starts it; a memory file read before
 * the server is up (an editor restored on window reload) waits for it instead of failing. A
 * second activation of the same version reuses the environment.
 */
// covers P6, P7 (install and go; requests wait for the server)
import { mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { URI } from "vscode-uri";
import { FakeHost } from "./host";

const EXTENSION_ROOT = new URL("../../", import.meta.url);
const manifest = (await import("../../package.json", { with: { type: "json" } })).default as { version: string };
let tmp: string;
let savedConfigDir: string | undefined;

beforeAll(() => {
  tmp = realpathSync(mkdtempSync(join(tmpdir(), "lecode-bundled-")));
  mkdirSync(join(tmp, "project"));
  mkdirSync(join(tmp, "config"));
  savedConfigDir = process.env.LECODE_CONFIG_DIR;
  process.env.LECODE_CONFIG_DIR = join(tmp, "config");
});

afterAll(() => {
  if (savedConfigDir === undefined) delete process.env.LECODE_CONFIG_DIR;
  else process.env.LECODE_CONFIG_DIR = savedConfigDir;
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

/** Activate the built extension in a fresh host on the project, with `storage` as global storage. */
function activate(storage: string) {
  const host = new FakeHost([{ uri: URI.file(join(tmp, "project")), name: "project", index: 0 }]);
  const extension = host.load(new URL("../../dist/extension.js", import.meta.url));
  extension.activate(host.context(EXTENSION_ROOT, storage));
  return { host, extension };
}

function memoryFile(host: FakeHost) {
  const files = host.fileSystems.get("lecode-memory");
  if (!files) throw new Error("the lecode-memory file system was not registered");
  return { files, uri: URI.parse(`lecode-memory:/MEMORY.md?${encodeURIComponent(host.folders[0].uri.toString())}`) };
}

describe("the server the extension brings", () => {
  const storage = () => join(tmp, "global-storage");

  it("is set up on first start, with progress, and serves a read made before it was up", async () => {
    const { host, extension } = activate(storage());
    try {
      // Asked at once, as VS Code asks for a restored editor: this waits for the setup and start.
      const { files, uri } = memoryFile(host);
      const text = new TextDecoder().decode(await files.readFile(uri));
      expect(text).toBe("");
      expect(host.progress[0]).toBe("lecode: setting up its server");
      expect(host.progress).toContain("3/3: installing lecode-ls (a minute or two)");
      const python = join(storage(), "server", manifest.version, "bin", "python");
      expect(host.log).toContain(`[info] starting lecode-ls: ${JSON.stringify([python, "-m", "lecode_ls"])}`);
      expect(host.messages.filter((m) => m.startsWith("error:"))).toEqual([]);
      // The first start ends with a word that it is done.
      await host.messageWhen((m) => m === "info: lecode is ready: its language server is set up and running.");
      expect(readdirSync(join(storage(), "server"))).toEqual([manifest.version]);
    } finally {
      await extension.deactivate();
    }
  }, 300_000);

  it("is reused by the next window of the same version", async () => {
    const { host, extension } = activate(storage());
    try {
      const { files, uri } = memoryFile(host);
      expect(new TextDecoder().decode(await files.readFile(uri))).toBe("");
      expect(host.progress).toEqual([]);
    } finally {
      await extension.deactivate();
    }
  });
});
