/**
 * The server the extension brings: finding uv or Python on each platform, the commands that make
 * its environment, quoting for display, and the environment's life (made once per version in a
 * temporary folder, reused, replaced on a new version, never left half-made). Platform values
 * are Windows', macOS' and Linux's own, tested here on Linux; setup steps run through a recording
 * runner that does what uv, venv and pip would do to the folder.
 */
// covers P6, P7 (install and go: the .vsix starts its own server)
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  type InstallContext,
  InstallError,
  STAMP,
  bundledMcpServer,
  bundledServer,
  findTool,
  installSteps,
  installedServer,
  nothingToInstallWith,
} from "../src/install/environment";
import {
  VERSION_PROBE,
  displayCommand,
  environmentPython,
  pathCandidates,
  pythonCandidates,
  quoteArgument,
  supportedPython,
  uvFallbacks,
} from "../src/install/platform";
import { type RunResult, type Runner, runProcess, windowsCommand } from "../src/install/run";

describe("the environment's interpreter", () => {
  it.each([
    ["win32", "C:\\Users\\me\\AppData\\Roaming\\Code\\User\\globalStorage\\lecode.lecode\\server\\0.1.0", "C:\\Users\\me\\AppData\\Roaming\\Code\\User\\globalStorage\\lecode.lecode\\server\\0.1.0\\Scripts\\python.exe"],
    ["darwin", "/Users/me/Library/Application Support/Code/User/globalStorage/lecode.lecode/server/0.1.0", "/Users/me/Library/Application Support/Code/User/globalStorage/lecode.lecode/server/0.1.0/bin/python"],
    ["linux", "/home/me/.config/Code/User/globalStorage/lecode.lecode/server/0.1.0", "/home/me/.config/Code/User/globalStorage/lecode.lecode/server/0.1.0/bin/python"],
  ] as const)("is where %s's venv puts it", (platform, env, python) => {
    expect(environmentPython(env, platform)).toBe(python);
  });
});

describe("PATH search", () => {
  it("tries every PATHEXT extension in every PATH folder on Windows, whatever the variables' case", () => {
    const env = { Path: 'C:\\Windows\\system32;"C:\\Program Files\\uv";;', PATHEXT: ".COM;.EXE;.CMD" };
    expect(pathCandidates("uv", env, "win32")).toEqual([
      "C:\\Windows\\system32\\uv.com",
      "C:\\Windows\\system32\\uv.exe",
      "C:\\Windows\\system32\\uv.cmd",
      "C:\\Program Files\\uv\\uv.com",
      "C:\\Program Files\\uv\\uv.exe",
      "C:\\Program Files\\uv\\uv.cmd",
    ]);
  });

  it.each(["darwin", "linux"] as const)("joins the name to each PATH folder on %s", (platform) => {
    expect(pathCandidates("python3", { PATH: "/opt/homebrew/bin:/usr/bin::" }, platform)).toEqual([
      "/opt/homebrew/bin/python3",
      "/usr/bin/python3",
    ]);
  });

  it("also looks where uv's installer puts uv, for a VS Code started without the shell's PATH", () => {
    expect(uvFallbacks({ USERPROFILE: "C:\\Users\\me" }, "win32")).toEqual([
      "C:\\Users\\me\\.local\\bin\\uv.exe",
      "C:\\Users\\me\\.cargo\\bin\\uv.exe",
    ]);
    expect(uvFallbacks({ HOME: "/Users/me" }, "darwin")).toEqual(["/Users/me/.local/bin/uv", "/Users/me/.cargo/bin/uv"]);
    expect(uvFallbacks({}, "linux")).toEqual([]);
  });

  it("prefers the py launcher on Windows and versioned names elsewhere", () => {
    expect(pythonCandidates("win32")).toEqual([
      { command: "py", args: ["-3"] },
      { command: "python3", args: [] },
      { command: "python", args: [] },
    ]);
    expect(pythonCandidates("linux").map((c) => c.command)).toEqual([
      "python3.14",
      "python3.13",
      "python3.12",
      "python3.11",
      "python3",
      "python",
    ]);
  });

  it.each([
    ["3.11", true],
    ["3.14", true],
    ["4.0", true],
    ["3.10", false],
    ["2.7", false],
    ["", false],
  ] as const)("takes Python %s as supported: %s", (version, supported) => {
    expect(supportedPython(version)).toBe(supported);
  });
});

describe("quoting", () => {
  it("leaves plain arguments alone and quotes the rest as each platform's shell reads them", () => {
    expect(quoteArgument("C:\\Python312\\python.exe", "win32")).toBe("C:\\Python312\\python.exe");
    expect(quoteArgument("C:\\Program Files\\Python312\\python.exe", "win32")).toBe('"C:\\Program Files\\Python312\\python.exe"');
    expect(quoteArgument('say "hi"', "win32")).toBe('"say ""hi"""');
    expect(quoteArgument("/Users/me/Library/Application Support/x", "darwin")).toBe("'/Users/me/Library/Application Support/x'");
    expect(quoteArgument("it's", "linux")).toBe(`'it'"'"'s'`);
    expect(quoteArgument("", "linux")).toBe("''");
    expect(displayCommand(["uv", "venv", "--python", ">=3.11", "/tmp/env"], "linux")).toBe("uv venv --python '>=3.11' /tmp/env");
  });

  it("runs a Windows batch file through cmd.exe with every part escaped, and anything else directly", () => {
    expect(windowsCommand("C:\\pyenv\\shims\\python.bat", ["-c", 'print("a b")'], "win32")).toEqual({
      command: "cmd.exe",
      args: ["/d", "/s", "/c", '"C:\\pyenv\\shims\\python.bat ^"-c^" ^"print^(\\^"a^ b\\^"^)^""'],
      verbatim: true,
    });
    expect(windowsCommand("C:\\uv\\uv.exe", ["venv"], "win32")).toEqual({ command: "C:\\uv\\uv.exe", args: ["venv"], verbatim: false });
    expect(windowsCommand("/usr/bin/python.cmd", ["-V"], "linux")).toEqual({ command: "/usr/bin/python.cmd", args: ["-V"], verbatim: false });
  });
});

describe("installSteps", () => {
  it("uses uv venv and uv pip on Windows, into Scripts\\python.exe", () => {
    const steps = installSteps({ kind: "uv", uv: "C:\\uv\\uv.exe" }, "C:\\ext\\server\\lecode_ls-0.1.0-py3-none-any.whl", "C:\\store\\env", "win32");
    expect(steps).toEqual([
      ["C:\\uv\\uv.exe", "venv", "--python", ">=3.11", "C:\\store\\env"],
      ["C:\\uv\\uv.exe", "pip", "install", "--compile-bytecode", "--python", "C:\\store\\env\\Scripts\\python.exe", "C:\\ext\\server\\lecode_ls-0.1.0-py3-none-any.whl"],
    ]);
  });

  it("uses venv and pip of the found Python elsewhere, into bin/python", () => {
    const python = { kind: "python" as const, python: { command: "/usr/bin/python3.12", args: [] }, version: "3.12" };
    expect(installSteps(python, "/ext/server/w.whl", "/store/env", "darwin")).toEqual([
      ["/usr/bin/python3.12", "-m", "venv", "/store/env"],
      ["/store/env/bin/python", "-m", "pip", "install", "--disable-pip-version-check", "--no-input", "/ext/server/w.whl"],
    ]);
  });

  it("keeps the py launcher's -3 in front of -m venv", () => {
    const python = { kind: "python" as const, python: { command: "C:\\Windows\\py.exe", args: ["-3"] }, version: "3.13" };
    expect(installSteps(python, "w.whl", "C:\\env", "win32")[0]).toEqual(["C:\\Windows\\py.exe", "-3", "-m", "venv", "C:\\env"]);
  });
});

/** A recording runner: answers version probes, and does to the folder what venv and pip would. */
class FakeSetup {
  readonly calls: string[][] = [];
  versions = new Map<string, string>();
  /** Output of a failing step, by its first two words ("-m venv"). */
  failing = new Map<string, Partial<RunResult>>();

  constructor(private readonly platform: NodeJS.Platform = "linux") {}

  readonly run: Runner = async (command, args) => {
    this.calls.push([command, ...args]);
    if (args.at(-1) === VERSION_PROBE) {
      const version = this.versions.get(command);
      return version === undefined ? { code: 1, stdout: "", stderr: "not a python" } : { code: 0, stdout: `${version}\n`, stderr: "" };
    }
    const key = args.slice(0, 2).join(" ");
    const failure = this.failing.get(key);
    if (failure !== undefined) {
      return { code: 1, stdout: "", stderr: "", ...failure };
    }
    const venvAt = args[0] === "venv" ? args.at(-1) : args[0] === "-m" && args[1] === "venv" ? args.at(-1) : undefined;
    if (venvAt !== undefined) {
      const python = environmentPython(venvAt, this.platform);
      mkdirSync(dirname(python), { recursive: true });
      writeFileSync(python, "");
    }
    return { code: 0, stdout: "", stderr: "" };
  };
}

describe("findTool", () => {
  const windows = { Path: "C:\\Python310;C:\\Windows", PATHEXT: ".EXE", USERPROFILE: "C:\\Users\\me" };

  function context(files: string[], setup: FakeSetup, env: NodeJS.ProcessEnv, platform: NodeJS.Platform): InstallContext {
    return {
      platform,
      env,
      extensionDir: "",
      storageDir: tmpdir(),
      version: "0.1.0",
      run: setup.run,
      isFile: async (file) => files.includes(file),
      progress: () => undefined,
      log: () => undefined,
    };
  }

  it("takes uv where its installer put it, off PATH, on Windows", async () => {
    const setup = new FakeSetup("win32");
    const found = await findTool(context(["C:\\Users\\me\\.local\\bin\\uv.exe", "C:\\Windows\\py.exe"], setup, windows, "win32"));
    expect(found).toEqual({ tool: { kind: "uv", uv: "C:\\Users\\me\\.local\\bin\\uv.exe" }, tooOld: [] });
    expect(setup.calls).toEqual([]);
  });

  it("skips a Python older than 3.11 and the Store's stub, and names the old one when nothing fits", async () => {
    const setup = new FakeSetup("win32");
    setup.versions.set("C:\\Python310\\python.exe", "3.10");
    // C:\Windows\python.exe is the Microsoft Store stub: it fails the probe.
    const files = ["C:\\Python310\\python.exe", "C:\\Windows\\python.exe"];
    const found = await findTool(context(files, setup, windows, "win32"));
    expect(found).toEqual({ tooOld: ["C:\\Python310\\python.exe is Python 3.10"] });
    expect(nothingToInstallWith(found.tooOld)).toBe(
      "lecode needs Python 3.11 or newer, or uv, to set up its language server, and found neither on PATH " +
        "(C:\\Python310\\python.exe is Python 3.10). Install uv (https://docs.astral.sh/uv/getting-started/installation/) " +
        'or Python 3.11+ (https://www.python.org/downloads/), then run "lecode: Restart Server". Or set lecode.server.command ' +
        "to a lecode-ls you installed yourself.",
    );
  });

  it("finds the py launcher's Python 3.12 on Windows", async () => {
    const setup = new FakeSetup("win32");
    setup.versions.set("C:\\Windows\\py.exe", "3.12");
    const found = await findTool(context(["C:\\Windows\\py.exe"], setup, windows, "win32"));
    expect(found.tool).toEqual({ kind: "python", python: { command: "C:\\Windows\\py.exe", args: ["-3"] }, version: "3.12" });
    expect(setup.calls).toEqual([["C:\\Windows\\py.exe", "-3", "-c", "import sys; print('%d.%d' % sys.version_info[:2])"]]);
  });

  it("finds python3.11 on macOS before an older python3", async () => {
    const setup = new FakeSetup("darwin");
    setup.versions.set("/usr/bin/python3", "3.9");
    setup.versions.set("/opt/homebrew/bin/python3.11", "3.11");
    const files = ["/usr/bin/python3", "/opt/homebrew/bin/python3.11"];
    const found = await findTool(context(files, setup, { PATH: "/opt/homebrew/bin:/usr/bin", HOME: "/Users/me" }, "darwin"));
    expect(found.tool).toMatchObject({ kind: "python", version: "3.11" });
  });
});

describe("bundledServer", () => {
  let tmp: string;
  let extensionDir: string;
  let storageDir: string;
  let bin: string;
  const progress: string[] = [];

  beforeEach(() => {
    tmp = mkdtempSync(join(tmpdir(), "lecode-install-"));
    extensionDir = join(tmp, "extension");
    storageDir = join(tmp, "storage");
    bin = join(tmp, "bin");
    mkdirSync(join(extensionDir, "server"), { recursive: true });
    mkdirSync(bin);
    writeFileSync(join(extensionDir, "server", "lecode_ls-0.1.0-py3-none-any.whl"), "");
    progress.length = 0;
  });

  afterEach(() => rmSync(tmp, { recursive: true, force: true }));

  function context(setup: FakeSetup, version = "0.1.0"): InstallContext {
    return {
      platform: "linux",
      env: { PATH: bin, HOME: join(tmp, "home") },
      extensionDir,
      storageDir,
      version,
      run: setup.run,
      isFile: async (file) => existsSync(file),
      progress: (message) => progress.push(message),
      log: () => undefined,
    };
  }

  const tool = (name: string): string => {
    writeFileSync(join(bin, name), "");
    return join(bin, name);
  };

  it("makes the environment with uv once, then reuses it", async () => {
    const uv = tool("uv");
    const setup = new FakeSetup();
    const command = await bundledServer(context(setup));
    const env = join(storageDir, "server", "0.1.0");
    expect(command).toEqual([join(env, "bin", "python"), "-m", "lecode_ls"]);
    const wheel = join(extensionDir, "server", "lecode_ls-0.1.0-py3-none-any.whl");
    // Made in a temporary folder, checked, then renamed into place.
    const temporary = setup.calls[0].at(-1)!;
    expect(temporary).toMatch(/server\/0\.1\.0\.tmp-\d+-[0-9a-f]{8}$/);
    expect(setup.calls).toEqual([
      [uv, "venv", "--python", ">=3.11", temporary],
      [uv, "pip", "install", "--compile-bytecode", "--python", join(temporary, "bin", "python"), wheel],
      [join(temporary, "bin", "python"), "-c", "import lecode_ls.cli, lecode_ls.server.wiring"],
    ]);
    expect(progress).toEqual(["1/3: finding uv or Python 3.11+", "2/3: making an environment with uv", "3/3: installing lecode-ls (a minute or two)"]);
    expect(readdirSync(join(storageDir, "server"))).toEqual(["0.1.0"]);
    expect(existsSync(join(env, STAMP))).toBe(true);

    const again = new FakeSetup();
    expect(await bundledServer(context(again))).toEqual(command);
    expect(await installedServer(context(again))).toEqual(command);
    expect(again.calls).toEqual([]);
  });

  it("installs the wheel's mcp extra into the environment only when agent mode first needs it", async () => {
    // issue 28, item 4: the language server's first start is not made longer for everyone.
    const uv = tool("uv");
    const setup = new FakeSetup();
    let sdk = false;
    const run: Runner = async (command, args, options) => {
      if (args.join(" ") === "-c import mcp.server") {
        setup.calls.push([command, ...args]);
        return sdk ? { code: 0, stdout: "", stderr: "" } : { code: 1, stdout: "", stderr: "No module named 'mcp'" };
      }
      if (args.at(-1)?.endsWith("[mcp]")) sdk = true;
      return setup.run(command, args, options);
    };
    const command = await bundledServer({ ...context(setup), run });
    expect(setup.calls.some((call) => call.some((arg) => arg.includes("mcp")))).toBe(false);
    setup.calls.length = 0;
    expect(await bundledMcpServer({ ...context(setup), run })).toEqual(command);
    const env = join(storageDir, "server", "0.1.0");
    const wheel = join(extensionDir, "server", "lecode_ls-0.1.0-py3-none-any.whl");
    expect(setup.calls).toEqual([
      [join(env, "bin", "python"), "-c", "import mcp.server"],
      [uv, "pip", "install", "--compile-bytecode", "--python", join(env, "bin", "python"), `${wheel}[mcp]`],
      [join(env, "bin", "python"), "-c", "import mcp.server"],
    ]);
    setup.calls.length = 0;
    expect(await bundledMcpServer({ ...context(setup), run })).toEqual(command);
    expect(setup.calls).toEqual([[join(env, "bin", "python"), "-c", "import mcp.server"]]); // once
  });

  it("makes a new environment for a new version and removes the old one", async () => {
    tool("uv");
    await bundledServer(context(new FakeSetup(), "0.1.0"));
    const command = await bundledServer(context(new FakeSetup(), "0.2.0"));
    expect(command[0]).toBe(join(storageDir, "server", "0.2.0", "bin", "python"));
    expect(readdirSync(join(storageDir, "server"))).toEqual(["0.2.0"]);
  });

  it("uses python -m venv and pip without uv", async () => {
    const python = tool("python3");
    const setup = new FakeSetup();
    setup.versions.set(python, "3.11");
    const command = await bundledServer(context(setup));
    expect(command[0]).toBe(join(storageDir, "server", "0.1.0", "bin", "python"));
    expect(setup.calls[1].slice(0, 3)).toEqual([python, "-m", "venv"]);
    expect(setup.calls[2].slice(1, 4)).toEqual(["-m", "pip", "install"]);
  });

  it("says to install python3-venv when Debian's Python has no venv, and leaves no half-made environment", async () => {
    const python = tool("python3");
    const setup = new FakeSetup();
    setup.versions.set(python, "3.11");
    setup.failing.set("-m venv", {
      stdout: "The virtual environment was not created successfully because ensurepip is not\navailable.",
    });
    const failure = bundledServer(context(setup));
    await expect(failure).rejects.toBeInstanceOf(InstallError);
    await expect(failure).rejects.toThrow(/exited with 1: .*install python3-venv \(sudo apt install python3-venv\), or install uv\./);
    expect(readdirSync(join(storageDir, "server"))).toEqual([]);
    expect(await installedServer(context(setup))).toBeUndefined();
  });

  it("finds a real Python 3.11+ on a first start, before VS Code has made its storage folder", async () => {
    // issue 30, item 1: the version probe ran with the storage folder as its cwd, which does not
    // exist on a fresh install, so spawn failed and no Python was "found on PATH".
    // The interpreter itself, not a shim (pyenv's needs bash on PATH), linked as python3.
    const found = spawnSync("python3", ["-c", "import sys; print(sys.executable)"], { encoding: "utf8" });
    expect(found.status, "a python3 on PATH (Python 3.11+ runs the repository's tests)").toBe(0);
    symlinkSync(realpathSync(found.stdout.trim()), join(bin, "python3"));
    const setup = new FakeSetup();
    // The version probe is the real one; the steps that would install are recorded.
    const run: Runner = (command, args, options) =>
      args.at(-1) === VERSION_PROBE ? runProcess(command, args, options) : setup.run(command, args, options);
    expect(existsSync(storageDir)).toBe(false);
    const command = await bundledServer({ ...context(setup), run });
    expect(command[0]).toBe(join(storageDir, "server", "0.1.0", "bin", "python"));
    expect(setup.calls[0].slice(0, 3)).toEqual([join(bin, "python3"), "-m", "venv"]);
  });

  it("says what to install when there is neither uv nor Python 3.11+", async () => {
    await expect(bundledServer(context(new FakeSetup()))).rejects.toThrow(
      /^lecode needs Python 3\.11 or newer, or uv, to set up its language server, and found neither on PATH\. Install uv/,
    );
  });

  it("names the missing wheel of a build that has none", async () => {
    rmSync(join(extensionDir, "server"), { recursive: true });
    await expect(bundledServer(context(new FakeSetup()))).rejects.toThrow(/has no lecode-ls wheel in .*server\. Set lecode\.server\.command/);
  });
});
