/**
 * The Chat view: a WebviewView in the lecode view container that shows the page and connects it
 * to the ChatController. The page may load files only from the extension's dist and media folders,
 * may not run `command:` links, and everything it posts goes through the controller's checks.
 */
import * as vscode from "vscode";
import type { ChatController } from "./controller";
import { chatHtml } from "./html";

export const CHAT_VIEW = "lecode.chat";

export class ChatViewProvider implements vscode.WebviewViewProvider {
  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly chat: ChatController,
  ) {}

  resolveWebviewView(view: vscode.WebviewView): void {
    const dist = vscode.Uri.joinPath(this.extensionUri, "dist");
    const media = vscode.Uri.joinPath(this.extensionUri, "media");
    const webview = view.webview;
    webview.options = { enableScripts: true, enableCommandUris: false, localResourceRoots: [dist, media] };
    webview.html = chatHtml({
      cspSource: webview.cspSource,
      scriptUri: webview.asWebviewUri(vscode.Uri.joinPath(dist, "webview.js")).toString(),
      styleUri: webview.asWebviewUri(vscode.Uri.joinPath(media, "chat.css")).toString(),
    });
    const received = webview.onDidReceiveMessage((message: unknown) => this.chat.receive(message));
    const detach = this.chat.attach((message) => webview.postMessage(message));
    view.onDidDispose(() => {
      received.dispose();
      detach();
    });
  }
}
