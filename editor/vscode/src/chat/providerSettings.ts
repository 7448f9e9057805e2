/**
 * The set-up's choice, saved where every other way of configuring chat puts it: the person's own
 * `lecode.provider.base_url`, `model` and `api_key_env` settings (user scope: base_url and the key
 * variable are machine-scoped, so no repository can set them). A URL the person typed gets the key
 * from secret storage in the variable the settings name (OPENAI_API_KEY unless they named another);
 * a local server gets none (an empty variable), so no key is ever handed to it.
 */
import { type ConfigurationLike, DEFAULTS, apiKeyVariable } from "../common/settings";
import type { ProviderChoice } from "./setup";

export interface SaveDeps {
  configuration(): ConfigurationLike;
  /** Set `lecode.<key>` in the user's settings. */
  update(key: string, value: unknown): PromiseLike<void>;
  /** Restart the server, so that it starts with the key now stored. */
  restart(): Promise<void>;
}

export async function saveProvider(choice: ProviderChoice, deps: SaveDeps): Promise<void> {
  const config = deps.configuration();
  const variable = choice.keyed ? (apiKeyVariable(config) ?? DEFAULTS.provider.api_key_env) : "";
  const before = config.get<unknown>("provider.api_key_env") ?? DEFAULTS.provider.api_key_env;
  await deps.update("provider.base_url", choice.baseUrl);
  await deps.update("provider.model", choice.model);
  if (before !== variable) {
    // The extension restarts the server for a new key variable (settings.needsRestart).
    await deps.update("provider.api_key_env", variable);
  } else if (choice.keyed) {
    await deps.restart(); // the key may have been stored during the set-up
  }
}
