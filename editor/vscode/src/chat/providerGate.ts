/**
 * Whether chat may send, and the set-up step in its place until it may: the provider the
 * server's settings name (`lecode/provider/info`), asked whenever the view opens, the server
 * restarts or settings change; while there is none the page shows the set-up (setup.ts) and the
 * controller sends nothing.
 */
import type { ProviderInfoResult } from "../common/protocol";
import { Requests } from "../common/protocol";
import { type RequestSender, request } from "../common/requests";
import type { HostMessage } from "./messages";
import { ProviderSetup, type SetupDeps, type SetupMessage } from "./setup";

/** JSON-RPC's "method not found". */
const METHOD_NOT_FOUND = -32601;

/** The header's name of the provider: "gpt-4o · api.openai.com". */
export function providerLabel(info: ProviderInfoResult): string | undefined {
  if (!info.configured || info.baseUrl === null) {
    return undefined;
  }
  let host = info.baseUrl;
  try {
    host = new URL(info.baseUrl).host;
  } catch {
    // shown as it is
  }
  return `${info.model} · ${host}`;
}

export class ProviderGate {
  /** The provider as the server last said (undefined: not asked yet, or a server too old to say). */
  private info: ProviderInfoResult | undefined;
  /** Whether the server answered (or was too old to say): false until then, as on a first start. */
  private asked = false;
  /** Whether the set-up step is shown instead of the chat. */
  private shown = false;
  private readonly setup: ProviderSetup;

  constructor(
    private readonly sender: RequestSender,
    deps: Omit<SetupDeps, "show">,
    private readonly post: (message: HostMessage) => void,
    /** The chat is back: the cursor goes to its text box. */
    private readonly focus: () => void,
  ) {
    this.setup = new ProviderSetup({
      fetch: (url, init) => deps.fetch(url, init),
      storedKey: () => deps.storedKey(),
      askKey: () => deps.askKey(),
      save: (choice) => deps.save(choice),
      show: (view) => this.shown && this.post({ type: "setup", view }),
    });
  }

  /** Whether the server said that no provider is configured (a send would be refused). */
  get unset(): boolean {
    return this.info !== undefined && !this.info.configured;
  }

  /** Draw the set-up again, if it is shown (the page was loaded again). */
  redraw(): void {
    if (this.shown) {
      this.post({ type: "setup", view: this.setup.current });
    }
  }

  /** Show the set-up step (the status bar item, "lecode: Set Up Chat Model…", a refused send). */
  async open(): Promise<void> {
    this.shown = true;
    const info = this.info;
    const current = info?.configured && info.baseUrl ? { baseUrl: info.baseUrl, model: info.model } : undefined;
    this.post({ type: "setup", view: this.setup.current });
    await this.setup.open(current);
  }

  /** Back to the chat, if a provider is configured ("Keep <model>"). */
  close(): void {
    if (this.info?.configured) {
      this.hide();
    }
  }

  private hide(): void {
    this.shown = false;
    this.post({ type: "setup" });
    this.focus();
  }

  /**
   * Whether a send would be refused for want of a provider, asking the server first if it has not
   * answered yet (the page can send before the first check answers). Shows nothing itself.
   */
  async refuses(): Promise<boolean> {
    if (!this.asked) {
      await this.ask();
    }
    return this.unset;
  }

  /** A send was refused for want of a provider: the set-up, even if the server's info lagged. */
  async refused(): Promise<void> {
    await this.check().catch(() => undefined);
    if (!this.shown) {
      await this.open();
    }
  }

  /** Ask the server which provider its settings name, and name it in the header. */
  private async ask(): Promise<void> {
    try {
      this.info = await request(this.sender, Requests.providerInfo, {});
    } catch (error) {
      if ((error as { code?: unknown }).code !== METHOD_NOT_FOUND) {
        throw error;
      }
      // A lecode-ls older than lecode/provider/info (lecode.server.command): it says nothing,
      // so the chat shows no set-up and that server's own answer stands.
      this.info = undefined;
      this.asked = true;
      return;
    }
    this.asked = true;
    this.post({ type: "provider", label: providerLabel(this.info) });
  }

  /** Ask the server which provider its settings name; show the set-up while there is none. */
  async check(): Promise<void> {
    await this.ask();
    if (this.info === undefined) {
      return;
    }
    if (!this.info.configured) {
      if (!this.shown) {
        await this.open();
      }
    } else if (this.shown && this.setup.current.current === undefined) {
      this.hide(); // configured elsewhere (config.toml, the settings) while it was shown
    }
  }

  /** A set-up message of the page; once a choice is saved and the server has it, the chat. */
  async handle(message: SetupMessage): Promise<void> {
    if (this.shown && (await this.setup.handle(message))) {
      await this.check();
      if (this.info?.configured) {
        this.hide();
      }
    }
  }
}
