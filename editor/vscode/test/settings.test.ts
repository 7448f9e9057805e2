/**
 * The settings: package.json's contributes.configuration and src/common/settings.ts describe the
 * same keys, defaults and bounds, and only what the user set reaches the server.
 */
// covers P7 (settings)
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  BOUNDS,
  type ConfigurationLike,
  DEFAULTS,
  apiKeyVariable,
  needsRestart,
  serverCommand,
  settingsForServer,
} from "../src/common/settings";

const manifest = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
const properties: Record<string, { type: string | string[]; default: unknown; minimum?: number; maximum?: number; scope?: string }> =
  manifest.contributes.configuration.properties;

/** `{section: {key: value}}` as `{"<prefix>.section.key": value}` (a value may itself be an object). */
function flatten(tree: object, prefix = "lecode"): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [section, keys] of Object.entries(tree)) {
    for (const [key, value] of Object.entries(keys as object)) {
      out[`${prefix}.${section}.${key}`] = value;
    }
  }
  return out;
}

/** A configuration where `user` holds the values the user set; everything else is a default. */
function configuration(user: Record<string, unknown>): ConfigurationLike {
  const defaults = flatten(DEFAULTS, "");
  return {
    get: <T>(key: string) => (key in user ? user[key] : defaults[`.${key}`]) as T,
    inspect: <T>(key: string) => ({ globalValue: user[key] as T | undefined }),
  };
}

describe("package.json and settings.ts", () => {
  it("declare the same setting keys", () => {
    expect(Object.keys(properties).sort()).toEqual(Object.keys(flatten(DEFAULTS)).sort());
  });

  it("declare the same defaults", () => {
    for (const [key, value] of Object.entries(flatten(DEFAULTS))) {
      expect(properties[key].default, key).toEqual(value);
    }
  });

  it("declare types that fit the defaults", () => {
    const jsonType = (value: unknown): string =>
      value === null ? "null" : Array.isArray(value) ? "array" : Number.isInteger(value) ? "integer" : typeof value;
    for (const [key, value] of Object.entries(flatten(DEFAULTS))) {
      expect([properties[key].type].flat(), key).toContain(jsonType(value));
    }
  });

  it("declare the bounds the server enforces", () => {
    for (const [key, bounds] of Object.entries(BOUNDS)) {
      const { minimum, maximum } = properties[`lecode.${key}`];
      expect({ minimum, maximum }, key).toEqual(bounds);
    }
  });

  it("let an untrusted workspace not choose the server command, the provider or the agent's permissions", () => {
    expect(manifest.capabilities.untrustedWorkspaces).toMatchObject({
      supported: "limited",
      restrictedConfigurations: [
        "lecode.server.command",
        "lecode.provider.base_url",
        "lecode.provider.model",
        "lecode.provider.api_key_env",
        "lecode.agent.readonly",
        "lecode.agent.permissions",
        "lecode.agent.secret_files",
        "lecode.agent.instruction_files",
      ],
    });
  });

  it("let no repository's settings, even in a trusted workspace, choose where the key goes or widen what the model may do", () => {
    // issue 23, item 6: a trusted repository's .vscode/settings.json could set the provider URL
    // (which then receives the key) and the tool permissions.
    const machine = Object.keys(properties).filter((key) => properties[key].scope === "machine");
    expect(machine.sort()).toEqual([
      "lecode.agent.instruction_files",
      "lecode.agent.permissions",
      "lecode.agent.readonly",
      "lecode.agent.secret_files",
      "lecode.provider.api_key_env",
      "lecode.provider.base_url",
      "lecode.server.command",
    ]);
  });

  it("have no setting that could hold the API key itself", () => {
    expect(Object.keys(properties).filter((key) => /key/i.test(key))).toEqual(["lecode.provider.api_key_env"]);
  });
});

describe("settingsForServer", () => {
  it("sends only the keys the user set, so config.toml keeps the rest", () => {
    const sent = settingsForServer(
      configuration({
        "memory.max_bytes": 4096,
        "server.command": ["x"],
        "provider.model": "llama3.1:8b",
        "agent.permissions": { memory_forget: "deny" },
      }),
    );
    expect(sent).toEqual({
      memory: { max_bytes: 4096 },
      provider: { model: "llama3.1:8b" },
      agent: { permissions: { memory_forget: "deny" } },
      compaction: {},
      agents: {},
      team: {},
    });
  });

  it("sends empty sections when nothing is set", () => {
    expect(settingsForServer(configuration({}))).toEqual({ memory: {}, provider: {}, agent: {}, compaction: {}, agents: {}, team: {} });
  });

  it("sends every section of config.toml, compaction included", () => {
    // covers K2: the editor's compaction settings reach the server like the others.
    const sent = settingsForServer(configuration({ "compaction.buffer_tokens": 8192, "compaction.mid_turn_threshold": 0.5 }));
    expect(sent.compaction).toEqual({ buffer_tokens: 8192, mid_turn_threshold: 0.5 });
  });

  it("sends values set in the workspace or a folder too", () => {
    const config: ConfigurationLike = {
      get: <T>(key: string) => (key === "memory.enabled" ? false : key === "memory.auto_learn" ? true : undefined) as T,
      inspect: <T>(key: string) =>
        key === "memory.enabled"
          ? { workspaceValue: false as T }
          : key === "memory.auto_learn"
            ? { workspaceFolderValue: true as T }
            : {},
    };
    expect(settingsForServer(config)).toEqual({ memory: { enabled: false, auto_learn: true }, provider: {}, agent: {}, compaction: {}, agents: {}, team: {} });
  });
});

describe("serverCommand", () => {
  it.each([
    [["lecode-ls"], { command: ["lecode-ls"] }],
    [["uvx", "lecode-ls"], { command: ["uvx", "lecode-ls"] }],
  ])("accepts %j", (value, expected) => {
    expect(serverCommand(configuration({ "server.command": value }))).toEqual(expected);
  });

  it("takes an empty list, the default, as the server the extension brings", () => {
    expect(serverCommand(configuration({ "server.command": [] }))).toEqual({ bundled: true });
    expect(serverCommand(configuration({}))).toEqual({ bundled: true });
  });

  it.each([[[""]], ["lecode-ls"], [["lecode-ls", 3]]])("refuses %j with a sentence naming the setting", (value) => {
    const result = serverCommand(configuration({ "server.command": value }));
    expect(result).toEqual({ error: expect.stringContaining("lecode.server.command") });
  });
});

describe("apiKeyVariable", () => {
  it.each([
    [{}, "OPENAI_API_KEY"],
    [{ "provider.api_key_env": "OPENROUTER_API_KEY" }, "OPENROUTER_API_KEY"],
    [{ "provider.api_key_env": "" }, undefined],
    [{ "provider.api_key_env": "has space" }, undefined],
    [{ "provider.api_key_env": "1ST" }, undefined],
  ])("with %j is %j", (user, expected) => {
    expect(apiKeyVariable(configuration(user))).toBe(expected);
  });
});

describe("needsRestart", () => {
  const changed = (...sections: string[]) => ({
    affectsConfiguration: (section: string) => sections.some((key) => key === section || key.startsWith(`${section}.`)),
  });

  it("restarts for the server command and the key's variable name, which the process environment fixes", () => {
    expect(needsRestart(changed("lecode.server.command"))).toBe(true);
    expect(needsRestart(changed("lecode.provider.api_key_env"))).toBe(true);
  });

  it("does not restart for settings the server takes while running", () => {
    expect(needsRestart(changed("lecode.provider.model", "lecode.memory.max_bytes", "lecode.agent.readonly"))).toBe(false);
  });
});
