/**
 * The chat's set-up step: where chat goes, chosen by the person before anything is sent.
 *
 * Shown in the chat view while the server reports no provider (`lecode/provider/info`), and
 * whenever the person asks for it (the status bar item, "lecode: Set Up Chat Model…"). It finds
 * the OpenAI-compatible servers on this machine's usual loopback ports, or takes a URL and
 * (through VS Code's password box, into its secret storage) a key; lists the models the server
 * reports; and, once a model is picked, asks it for one word before saving the choice as the
 * `lecode.provider.*` settings. The host holds the state and the page draws it (SetupView).
 */
import { errorMessage } from "../common/errors";
import { type Fetcher, ProviderProblem, baseOf, checkBaseUrl, listModels, probeLocal, testModel } from "./providers";

/** What the set-up step shows. */
export interface SetupView {
  /** The servers found on loopback (after a probe). */
  local: { name: string; baseUrl: string; models: number }[];
  /** Whether the loopback ports were asked yet. */
  probed: boolean;
  /** What runs now, if anything (the page disables its buttons meanwhile). */
  busy?: "probing" | "listing" | "testing" | "saving";
  /** The URL in the text field. */
  url: string;
  /** Whether an API key is in VS Code's secret storage. */
  keyStored: boolean;
  /** The server whose models are listed, and whether it is a local one (sent no key). */
  server?: { baseUrl: string; local: boolean };
  models: string[];
  model?: string;
  /** Why the last step failed, as a sentence. */
  problem?: string;
  /** The provider configured now, when the person reopened the set-up (it can be closed). */
  current?: { baseUrl: string; model: string };
}

/** The choice the set-up saves. */
export interface ProviderChoice {
  baseUrl: string;
  model: string;
  /** A typed URL is sent the stored key; a local server none (its api_key_env becomes empty). */
  keyed: boolean;
}

export interface SetupDeps {
  fetch: Fetcher;
  /** The stored API key, if any. */
  storedKey(): Promise<string | undefined>;
  /** Ask for a key (a password box) and store it; whether one was stored. */
  askKey(): Promise<boolean>;
  /** Save the choice as settings (restarting the server when its environment must change). */
  save(choice: ProviderChoice): Promise<void>;
  /** Draw the view. */
  show(view: SetupView): void;
}

export type SetupMessage =
  | { type: "setupProbe" }
  | { type: "setupServer"; baseUrl: string; local: boolean }
  | { type: "setupKey" }
  | { type: "setupModel"; model: string }
  | { type: "setupUse" };

export class ProviderSetup {
  private view: SetupView = { local: [], probed: false, url: "", keyStored: false, models: [] };
  /** Counts the steps begun, so that a late answer of an older one is dropped. */
  private step = 0;

  constructor(private readonly deps: SetupDeps) {}

  get current(): SetupView {
    return this.view;
  }

  /** Open the set-up (again): ask the loopback ports the first time, say whether a key is stored. */
  async open(current?: { baseUrl: string; model: string }): Promise<void> {
    const keyStored = (await this.deps.storedKey()) !== undefined;
    this.update({ current, keyStored, url: this.view.url || (current?.baseUrl ?? ""), problem: undefined });
    if (!this.view.probed) {
      await this.probe();
    }
  }

  /** A set-up message of the page (already checked by parsePageMessage). True once a choice is saved. */
  async handle(message: SetupMessage): Promise<boolean> {
    switch (message.type) {
      case "setupProbe":
        await this.probe();
        return false;
      case "setupServer":
        await this.chooseServer(message.baseUrl, message.local);
        return false;
      case "setupKey":
        if (await this.deps.askKey()) {
          this.update({ keyStored: true });
          if (this.view.server !== undefined && !this.view.server.local) {
            await this.chooseServer(this.view.server.baseUrl, false);
          }
        }
        return false;
      case "setupModel":
        if (this.view.models.includes(message.model)) {
          this.update({ model: message.model, problem: undefined });
        }
        return false;
      case "setupUse":
        return this.use();
    }
  }

  private update(patch: Partial<SetupView>): void {
    this.view = { ...this.view, ...patch };
    this.deps.show(this.view);
  }

  private async probe(): Promise<void> {
    const step = ++this.step;
    this.update({ busy: "probing", problem: undefined });
    const found = await probeLocal(this.deps.fetch);
    if (step === this.step) {
      this.update({
        busy: undefined,
        probed: true,
        local: found.map((server) => ({ name: server.name, baseUrl: server.baseUrl, models: server.models.length })),
      });
    }
  }

  private async key(local: boolean): Promise<string | undefined> {
    return local ? undefined : this.deps.storedKey();
  }

  private async chooseServer(typed: string, local: boolean): Promise<void> {
    // A local server is one the probe found; anything else is a URL the person typed.
    const isLocal = local && this.view.local.some((server) => server.baseUrl === typed);
    const url = checkBaseUrl(typed);
    if (typeof url === "string") {
      this.update({ problem: url, url: typed, server: undefined, models: [], model: undefined });
      return;
    }
    const baseUrl = baseOf(url);
    const step = ++this.step;
    this.update({ busy: "listing", problem: undefined, url: isLocal ? this.view.url : typed, server: { baseUrl, local: isLocal }, models: [], model: undefined });
    try {
      const models = await listModels(this.deps.fetch, baseUrl, await this.key(isLocal));
      if (step !== this.step) return;
      const keep = this.view.current?.baseUrl === baseUrl && models.includes(this.view.current.model) ? this.view.current.model : models[0];
      this.update({
        busy: undefined,
        models,
        model: keep,
        problem: models.length === 0 ? "The server lists no models: load or pull one first, then choose the server again." : undefined,
      });
    } catch (error) {
      if (step !== this.step) return;
      this.update({ busy: undefined, problem: this.explain(error, isLocal) });
    }
  }

  private explain(error: unknown, local: boolean): string {
    const sentence = error instanceof ProviderProblem ? error.message : errorMessage(error);
    const keyHint = !local && /refused the (request|API key)/.test(sentence) ? " Use API key… to store one." : "";
    return `${sentence[0].toUpperCase()}${sentence.slice(1)}.${keyHint}`;
  }

  /** Test the chosen model, then save it; true once saved. */
  private async use(): Promise<boolean> {
    const { server, model } = this.view;
    if (server === undefined || model === undefined || this.view.busy !== undefined) {
      return false;
    }
    const step = ++this.step;
    this.update({ busy: "testing", problem: undefined });
    try {
      await testModel(this.deps.fetch, server.baseUrl, model, await this.key(server.local));
      if (step !== this.step) return false;
      this.update({ busy: "saving" });
      await this.deps.save({ baseUrl: server.baseUrl, model, keyed: !server.local });
      this.update({ busy: undefined, current: { baseUrl: server.baseUrl, model } });
      return true;
    } catch (error) {
      if (step === this.step) {
        this.update({ busy: undefined, problem: this.explain(error, server.local) });
      }
      return false;
    }
  }
}
