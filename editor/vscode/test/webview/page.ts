/**
 * The chat page in a real headless Chromium (Debian's `chromium`, driven by playwright-core; no
 * browser is downloaded), served from a loopback HTTP server with the same HTML builder and CSP
 * the extension uses, and connected to a real ChatController in this process:
 * `acquireVsCodeApi().postMessage` reaches the controller, and what the controller posts reaches
 * the page as a `message` event, as in VS Code.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { type IncomingMessage, type Server, type ServerResponse, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BrowserContext, type Page, chromium } from "playwright-core";
import { type ChatDeps, ChatController } from "../../src/chat/controller";
import { chatHtml } from "../../src/chat/html";
import type { HostMessage } from "../../src/chat/messages";

const root = new URL("../../", import.meta.url);

/** The flags that let Chromium run here: no sandbox (root), no GPU, nothing fetched in the background. */
export const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/** Serves the chat page, its script and its stylesheet; records every path asked for. */
export class PageServer {
  readonly requests: string[] = [];
  private server: Server | undefined;
  origin = "";

  async start(): Promise<void> {
    const files: Record<string, [string, string]> = {
      "/dist/webview.js": ["dist/webview.js", "text/javascript"],
      "/media/chat.css": ["media/chat.css", "text/css"],
    };
    this.server = createServer((request: IncomingMessage, response: ServerResponse) => {
      const path = new URL(request.url ?? "/", this.origin).pathname;
      this.requests.push(path);
      if (path === "/") {
        const html = chatHtml({
          cspSource: this.origin,
          scriptUri: `${this.origin}/dist/webview.js`,
          styleUri: `${this.origin}/media/chat.css`,
        });
        response.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(html);
        return;
      }
      const file = files[path];
      if (file === undefined) {
        response.writeHead(404).end();
        return;
      }
      response.writeHead(200, { "content-type": file[1] }).end(readFileSync(new URL(file[0], root)));
    });
    await new Promise<void>((resolve) => this.server?.listen(0, "127.0.0.1", resolve));
    this.origin = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    await new Promise((resolve) => this.server?.close(resolve));
  }
}

export class Browser {
  private dir = "";
  context: BrowserContext | undefined;

  async start(): Promise<void> {
    this.dir = mkdtempSync(join(tmpdir(), "lecode-chromium-"));
    this.context = await chromium.launchPersistentContext(this.dir, {
      executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
      headless: true,
      args: CHROMIUM_ARGS,
    });
  }

  async stop(): Promise<void> {
    await this.context?.close();
    if (this.dir) rmSync(this.dir, { recursive: true, force: true });
  }
}

/** The page's window as a test sees it through `page.evaluate`. */
type PageWindow = { postMessage(message: unknown, target: string): void; [flag: string]: unknown };

/** One chat page wired to a controller: `fromPage` holds everything the page posted, in order. */
export interface ChatPage {
  page: Page;
  chat: ChatController;
  fromPage: unknown[];
}

export async function openChat(context: BrowserContext, origin: string, deps: ChatDeps): Promise<ChatPage> {
  const page = await context.newPage();
  const chat = new ChatController(deps);
  const fromPage: unknown[] = [];
  // Host to page, in order and asynchronously as in VS Code: what the controller posts in one go
  // is delivered in one batch, after the batch before it.
  let queued: HostMessage[] = [];
  let delivered: Promise<unknown> = Promise.resolve();
  chat.attach((message: HostMessage) => {
    queued.push(structuredClone(message));
    if (queued.length > 1) {
      return;
    }
    delivered = delivered.then(() => {
      const batch = queued;
      queued = [];
      return page
        .evaluate((messages) => messages.forEach((m) => (globalThis as unknown as PageWindow).postMessage(m, "*")), batch)
        .catch(() => undefined);
    });
  });
  await page.exposeFunction("__toHost", (message: unknown) => {
    fromPage.push(message);
    void chat.receive(message);
  });
  await page.addInitScript(() => {
    const page = globalThis as unknown as { acquireVsCodeApi(): unknown; __toHost(message: unknown): void };
    let state: unknown;
    page.acquireVsCodeApi = () => ({
      postMessage: (message: unknown) => page.__toHost(message),
      getState: () => state,
      setState: (next: unknown) => {
        state = next;
      },
    });
  });
  await page.goto(`${origin}/`);
  return { page, chat, fromPage };
}

/** A flag on the page's window (an injected script would set one). */
export function windowFlag(page: Page, name: string): Promise<unknown> {
  return page.evaluate((flag) => (globalThis as unknown as PageWindow)[flag], name);
}
