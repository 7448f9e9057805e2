/**
 * The status bar item of chat: the provider and model chat uses and the server's state, as
 * `lecode/provider/info` and the client report them. A click opens the chat's set-up (or, when
 * the server failed, restarts it).
 */
import type * as vscode from "vscode";
import type { ServerState } from "../common/client";
import type { ProviderInfoResult } from "../common/protocol";
import * as api from "../common/vscodeapi";

export const SET_UP_COMMAND = "lecode.setUpChat";

export interface StatusLook {
  text: string;
  tooltip: string;
  command: string;
}

function host(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}

/** What the item shows for a server state and the provider its settings name. */
export function statusLook(state: ServerState, info: ProviderInfoResult | undefined): StatusLook {
  switch (state.state) {
    case "starting":
      return { text: "$(sync~spin) lecode", tooltip: "lecode-ls is starting.", command: SET_UP_COMMAND };
    case "stopped":
      return { text: "$(circle-slash) lecode", tooltip: "lecode-ls is not running.", command: "lecode.restartServer" };
    case "failed":
      return { text: "$(error) lecode", tooltip: `${state.message}\n\nClick to restart lecode-ls.`, command: "lecode.restartServer" };
    case "running":
      break;
  }
  if (info === undefined) {
    return { text: "$(comment-discussion) lecode", tooltip: "lecode-ls is running.", command: SET_UP_COMMAND };
  }
  if (!info.configured || info.baseUrl === null) {
    return {
      text: "$(comment-discussion) lecode: choose a model",
      tooltip: "No chat model is chosen yet, so nothing is sent anywhere. Click to choose one.",
      command: SET_UP_COMMAND,
    };
  }
  const key = info.apiKeyEnv === "" ? "no API key" : info.apiKeySet ? `API key in ${info.apiKeyEnv}` : `no key in ${info.apiKeyEnv}`;
  return {
    text: `$(comment-discussion) ${info.model} · ${host(info.baseUrl)}`,
    tooltip: `lecode chat: ${info.model} at ${info.baseUrl} (${key}); lecode-ls is running. Click to change the model.`,
    command: SET_UP_COMMAND,
  };
}

export class ChatStatus implements vscode.Disposable {
  private readonly item = api.createStatusBarItem("lecode.chat.status", "lecode chat");
  private state: ServerState = { state: "stopped" };
  private info: ProviderInfoResult | undefined;

  constructor() {
    this.draw();
    this.item.show();
  }

  serverChanged(state: ServerState): void {
    this.state = state;
    if (state.state !== "running") {
      this.info = undefined;
    }
    this.draw();
  }

  providerChanged(info: ProviderInfoResult | undefined): void {
    this.info = info;
    this.draw();
  }

  private draw(): void {
    const look = statusLook(this.state, this.info);
    this.item.text = look.text;
    this.item.tooltip = look.tooltip;
    this.item.command = look.command;
  }

  dispose(): void {
    this.item.dispose();
  }
}
