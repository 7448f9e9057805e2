/**
 * "lecode: Set API Key" and "lecode: Clear API Key": the provider's key in VS Code's SecretStorage.
 *
 * The key goes to the server only as an environment variable of its process (ServerClient reads
 * it at each start), so both commands restart the server. It is never a setting, never shown
 * again, never logged.
 */
import * as api from "../common/vscodeapi";
import { guarded } from "../notes/commands";

/** The SecretStorage key the API key is stored under. */
export const API_KEY_SECRET = "lecode.provider.apiKey";

/** The part of vscode.SecretStorage the commands use. */
export interface SecretStore {
  get(key: string): PromiseLike<string | undefined>;
  store(key: string, value: string): PromiseLike<void>;
  delete(key: string): PromiseLike<void>;
}

export interface ApiKeyDeps {
  secrets: SecretStore;
  /** The environment variable the server reads the key from (`lecode.provider.api_key_env`). */
  variable(): string | undefined;
  /** Restart the server so that it starts with the new environment. */
  restart(): Promise<void>;
}

const NO_VARIABLE =
  "lecode.provider.api_key_env is empty or not a valid environment variable name, so lecode-ls would not receive a key. " +
  "Set it (for example OPENAI_API_KEY) first.";

export async function setApiKey(deps: ApiKeyDeps): Promise<void> {
  const variable = deps.variable();
  if (variable === undefined) {
    throw new Error(NO_VARIABLE);
  }
  const key = await api.showInputBox({
    title: "lecode: Set API Key",
    prompt: `The provider's API key. It is kept in VS Code's secret storage and given to lecode-ls as ${variable}.`,
    password: true,
    ignoreFocusOut: true,
    validateInput: (value) => (value.trim() === "" ? "Paste the API key" : undefined),
  });
  if (key === undefined || key.trim() === "") {
    return;
  }
  await deps.secrets.store(API_KEY_SECRET, key.trim());
  await deps.restart();
  await api.showInformationMessage(`The API key is stored; lecode-ls restarted with it in ${variable}.`);
}

/**
 * The chat set-up's "API key…": ask for the key (a password box) and keep it in secret storage;
 * whether one was stored. The set-up restarts the server once the choice is saved.
 */
export async function askAndStoreKey(secrets: SecretStore): Promise<boolean> {
  const key = await api.showInputBox({
    title: "lecode: API Key",
    prompt: "The server's API key. It is kept in VS Code's secret storage and given to lecode-ls only.",
    password: true,
    ignoreFocusOut: true,
    validateInput: (value) => (value.trim() === "" ? "Paste the API key" : undefined),
  });
  if (key === undefined || key.trim() === "") {
    return false;
  }
  await secrets.store(API_KEY_SECRET, key.trim());
  return true;
}

export async function clearApiKey(deps: ApiKeyDeps): Promise<void> {
  await deps.secrets.delete(API_KEY_SECRET);
  await deps.restart();
  await api.showInformationMessage("The API key was removed from VS Code's secret storage; lecode-ls restarted without it.");
}

export function apiKeyCommands(deps: ApiKeyDeps): Record<string, () => Promise<void>> {
  return {
    "lecode.setApiKey": guarded(() => setApiKey(deps)),
    "lecode.clearApiKey": guarded(() => clearApiKey(deps)),
  };
}
