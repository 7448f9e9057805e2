/**
 * "lecode: Set API Key" and "lecode: Clear API Key": the key goes into SecretStorage, never into a
 * setting, and the server is restarted so that its environment carries the new key.
 */
// covers P7 (API key in SecretStorage)
import { beforeEach, describe, expect, it, vi } from "vitest";
import { API_KEY_SECRET, type ApiKeyDeps, apiKeyCommands } from "../src/chat/apiKey";
import * as api from "../src/common/vscodeapi";

vi.mock("../src/common/vscodeapi");

function deps(variable: string | null = "OPENAI_API_KEY") {
  const stored = new Map<string, string>();
  const order: string[] = [];
  const value: ApiKeyDeps = {
    secrets: {
      get: async (key) => stored.get(key),
      store: async (key, secret) => {
        order.push("store");
        stored.set(key, secret);
      },
      delete: async (key) => {
        order.push("delete");
        stored.delete(key);
      },
    },
    variable: () => variable ?? undefined,
    restart: async () => void order.push("restart"),
  };
  return { deps: value, stored, order };
}

beforeEach(() => {
  vi.mocked(api.showInformationMessage).mockResolvedValue(undefined);
  vi.mocked(api.showErrorMessage).mockResolvedValue(undefined);
});

describe("Set API Key", () => {
  it("asks with a password box, stores the key in SecretStorage, then restarts the server", async () => {
    vi.mocked(api.showInputBox).mockResolvedValue("  sk-secret  ");
    const { deps: d, stored, order } = deps();
    await apiKeyCommands(d)["lecode.setApiKey"]();
    expect(vi.mocked(api.showInputBox).mock.calls[0][0]).toMatchObject({ password: true, ignoreFocusOut: true });
    expect(stored.get(API_KEY_SECRET)).toBe("sk-secret");
    expect(order).toEqual(["store", "restart"]);
    const said = vi.mocked(api.showInformationMessage).mock.calls.flat().join(" ");
    expect(said).toContain("OPENAI_API_KEY");
    expect(said).not.toContain("sk-secret");
  });

  it("does nothing when the box is dismissed", async () => {
    vi.mocked(api.showInputBox).mockResolvedValue(undefined);
    const { deps: d, order } = deps();
    await apiKeyCommands(d)["lecode.setApiKey"]();
    expect(order).toEqual([]);
  });

  it("says what to set first when no variable would carry the key", async () => {
    const { deps: d, order } = deps(null);
    await apiKeyCommands(d)["lecode.setApiKey"]();
    expect(api.showInputBox).not.toHaveBeenCalled();
    expect(order).toEqual([]);
    expect(vi.mocked(api.showErrorMessage).mock.calls[0][0]).toContain("lecode.provider.api_key_env");
  });
});

describe("Clear API Key", () => {
  it("deletes the key, then restarts the server without it", async () => {
    const { deps: d, stored, order } = deps();
    stored.set(API_KEY_SECRET, "sk-secret");
    await apiKeyCommands(d)["lecode.clearApiKey"]();
    expect(stored.has(API_KEY_SECRET)).toBe(false);
    expect(order).toEqual(["delete", "restart"]);
  });
});
