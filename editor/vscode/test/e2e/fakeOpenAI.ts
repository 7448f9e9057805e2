/**
 * A loopback HTTP server speaking the OpenAI Chat Completions API with SSE streaming: the model
 * the end-to-end chat tests talk to through the real lecode-ls. Each request takes the reply
 * `route` chooses for it, else the next queued reply; every request is recorded with its
 * Authorization header and body. It also lists models (GET /v1/models) and answers a request
 * that does not stream with one whole message, as the chat's set-up step asks.
 */
import { type IncomingMessage, type Server, type ServerResponse, createServer } from "node:http";
import type { AddressInfo } from "node:net";

export type Reply =
  /** Stream these pieces of text, then finish with usage and [DONE]. */
  | { text: string[] }
  /** Stream these pieces, then keep the stream open until the client goes away. */
  | { hang: string[] };

export interface SeenRequest {
  authorization: string | undefined;
  body: { model: string; messages: { role: string; content: unknown }[]; stream: boolean };
}

const chunk = (choice: object, extra: object = {}): string =>
  `data: ${JSON.stringify({ id: "chatcmpl-1", object: "chat.completion.chunk", created: 0, model: "gpt-4o-mini", choices: [choice], ...extra })}\n\n`;

export class FakeOpenAI {
  /** Every request that reached this server, whatever its path (model lists included). */
  readonly seen: { method: string; path: string; authorization: string | undefined }[] = [];
  /** The chat requests (POST /v1/chat/completions), streamed or not. */
  readonly requests: SeenRequest[] = [];
  /** What GET /v1/models lists. */
  models = ["gpt-4o", "gpt-4.1-mini"];
  readonly replies: Reply[] = [];
  /** Chooses the reply to a request by its body (e.g. its system message); undefined: the queue's. */
  route: ((body: SeenRequest["body"]) => Reply | undefined) | undefined;
  /** Resolves when a hanging reply's client went away (the turn was cancelled). */
  disconnected: Promise<void> = Promise.resolve();
  private server: Server | undefined;
  baseUrl = "";

  async start(): Promise<void> {
    this.server = createServer((request, response) => void this.answer(request, response));
    await new Promise<void>((resolve) => this.server?.listen(0, "127.0.0.1", resolve));
    this.baseUrl = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve));
  }

  private async answer(request: IncomingMessage, response: ServerResponse): Promise<void> {
    let raw = "";
    for await (const piece of request) raw += piece;
    this.seen.push({ method: request.method ?? "", path: request.url ?? "", authorization: request.headers.authorization });
    if (request.method === "GET" && request.url === "/v1/models") {
      response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ object: "list", data: this.models.map((id) => ({ id, object: "model" })) }));
      return;
    }
    if (request.method !== "POST" || request.url !== "/v1/chat/completions") {
      response.writeHead(404).end();
      return;
    }
    const seen: SeenRequest = { authorization: request.headers.authorization, body: JSON.parse(raw) };
    this.requests.push(seen);
    if (seen.body.stream !== true) {
      // A request that does not stream (the chat set-up's test) gets one whole message.
      const message = { role: "assistant", content: "OK" };
      response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ id: "chatcmpl-1", object: "chat.completion", choices: [{ index: 0, message, finish_reason: "stop" }] }));
      return;
    }
    const reply = this.route?.(seen.body) ?? this.replies.shift() ?? { text: ["OK"] };
    response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-store" });
    const pieces = "text" in reply ? reply.text : reply.hang;
    for (const text of pieces) {
      response.write(chunk({ index: 0, delta: { role: "assistant", content: text }, finish_reason: null }));
    }
    if ("hang" in reply) {
      this.disconnected = new Promise((resolve) => response.on("close", resolve));
      return;
    }
    response.write(chunk({ index: 0, delta: {}, finish_reason: "stop" }));
    response.write(`data: ${JSON.stringify({ id: "chatcmpl-1", object: "chat.completion.chunk", choices: [], usage: { prompt_tokens: 12, completion_tokens: pieces.length, total_tokens: 12 + pieces.length } })}\n\n`);
    response.end("data: [DONE]\n\n");
  }
}
