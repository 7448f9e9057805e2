/**
 * The chat's set-up step against real loopback HTTP servers (node's fetch, no mock of the network):
 * the probe finds an OpenAI-compatible server on a loopback port and ignores one that is not,
 * listing models reads `/models`, a refusal or a redirect or an oversized answer is said in a
 * sentence without the key, the key goes only to a URL the person typed, the test request asks
 * for one word, and the choice is saved only after that answer.
 */
// covers K2 (the provider is the person's choice), P7 (issue 30, item 2: a set-up step, not a default)
import { type IncomingMessage, type Server, type ServerResponse, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it, vi } from "vitest";
import { saveProvider } from "../src/chat/providerSettings";
import { MAX_BODY, ProviderProblem, checkBaseUrl, listModels, modelIds, probeLocal, testModel } from "../src/chat/providers";
import { type ProviderChoice, ProviderSetup, type SetupView } from "../src/chat/setup";

const KEY = "sk-test-0123456789abcdef";

interface Seen {
  method: string;
  url: string;
  authorization?: string;
  body: string;
}

type Answer = (seen: Seen, response: ServerResponse) => void;

/** A loopback server that answers every request with `answer` and records it. */
class Loopback {
  readonly seen: Seen[] = [];
  private server: Server | undefined;
  port = 0;

  constructor(private readonly answer: Answer) {}

  get baseUrl(): string {
    return `http://127.0.0.1:${this.port}/v1`;
  }

  async start(): Promise<this> {
    this.server = createServer((request: IncomingMessage, response: ServerResponse) => {
      let body = "";
      request.on("data", (piece) => (body += piece));
      request.on("end", () => {
        const seen = { method: request.method ?? "", url: request.url ?? "", authorization: request.headers.authorization, body };
        this.seen.push(seen);
        this.answer(seen, response);
      });
    });
    await new Promise<void>((resolve) => this.server?.listen(0, "127.0.0.1", resolve));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve));
  }
}

const json = (response: ServerResponse, status: number, value: unknown) =>
  response.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(value));

/** An OpenAI-compatible server: two models, a one-word answer; with `key`, only for that key. */
function openai(key?: string): Answer {
  return (seen, response) => {
    if (key !== undefined && seen.authorization !== `Bearer ${key}`) {
      json(response, 401, { error: { message: `Incorrect API key provided: ${seen.authorization ?? "none"}` } });
    } else if (seen.method === "GET" && seen.url === "/v1/models") {
      json(response, 200, { object: "list", data: [{ id: "qwen2.5-coder:1.5b", owned_by: "library" }, { id: "llama3.1:8b" }] });
    } else if (seen.method === "POST" && seen.url === "/v1/chat/completions") {
      json(response, 200, { choices: [{ index: 0, message: { role: "assistant", content: "OK" }, finish_reason: "stop" }] });
    } else {
      json(response, 404, { error: "no route" });
    }
  };
}

const servers: Loopback[] = [];
async function serve(answer: Answer): Promise<Loopback> {
  const server = await new Loopback(answer).start();
  servers.push(server);
  return server;
}

afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.stop()));
});

/** A port nothing listens on: a server started and stopped. */
async function closedPort(): Promise<number> {
  const server = await new Loopback(() => undefined).start();
  await server.stop();
  return server.port;
}

describe("the network side", () => {
  it("finds an OpenAI-compatible server on a loopback port and no other", async () => {
    const local = await serve(openai());
    const web = await serve((_seen, response) => response.writeHead(200, { "content-type": "text/html" }).end("<h1>a dev server</h1>"));
    const nothing = await closedPort();
    const found = await probeLocal(fetch, [
      { name: "Ollama", port: local.port },
      { name: "llama.cpp server", port: web.port },
      { name: "vLLM", port: nothing },
    ]);
    expect(found).toEqual([{ name: "Ollama", baseUrl: local.baseUrl, models: ["qwen2.5-coder:1.5b", "llama3.1:8b"] }]);
    expect(local.seen.map((s) => [s.method, s.url, s.authorization])).toEqual([["GET", "/v1/models", undefined]]);
  });

  it("asks only 127.0.0.1, on the usual ports of Ollama, llama.cpp, LM Studio and vLLM", async () => {
    const asked: string[] = [];
    await probeLocal(async (url) => {
      asked.push(url);
      throw new Error("refused");
    });
    expect(asked).toEqual([
      "http://127.0.0.1:11434/v1/models",
      "http://127.0.0.1:8080/v1/models",
      "http://127.0.0.1:1234/v1/models",
      "http://127.0.0.1:8000/v1/models",
    ]);
  });

  it("says a refused key in a sentence without the key", async () => {
    const server = await serve(openai("sk-right"));
    const refused = listModels(fetch, server.baseUrl, KEY);
    await expect(refused).rejects.toBeInstanceOf(ProviderProblem);
    await expect(refused).rejects.toThrow(/^the server refused the API key \(HTTP 401: Incorrect API key provided: Bearer \[key\]\)$/);
  });

  it("follows no redirect: a loopback answer cannot send the request elsewhere", async () => {
    const elsewhere = await serve(openai());
    const redirecting = await serve((_seen, response) => response.writeHead(302, { location: `${elsewhere.baseUrl}/models` }).end());
    await expect(listModels(fetch, redirecting.baseUrl, KEY)).rejects.toThrow(/cannot reach/);
    expect(elsewhere.seen).toEqual([]);
  });

  it("refuses an answer larger than it reads", async () => {
    const server = await serve((_seen, response) => json(response, 200, { data: [{ id: "x".repeat(MAX_BODY) }] }));
    await expect(listModels(fetch, server.baseUrl)).rejects.toThrow(/larger than/);
  });

  it("tests a model with one small request that carries no memory", async () => {
    const server = await serve(openai());
    await testModel(fetch, server.baseUrl, "llama3.1:8b");
    const body = JSON.parse(server.seen[0].body);
    expect(body).toEqual({ model: "llama3.1:8b", messages: [{ role: "user", content: "Reply with the word OK." }], max_tokens: 8, stream: false });
  });

  it("reads model IDs, dropping what is not one", () => {
    expect(modelIds({ data: [{ id: "a" }, { id: "" }, { id: 3 }, null, { id: "a" }, { id: "b" }] })).toEqual(["a", "b"]);
    expect(modelIds({ models: [] })).toBeUndefined();
  });

  it.each([
    ["not a URL", "api.openai.com"],
    ["a file URL", "file:///etc/passwd"],
    ["a key in the URL", "https://me:sk-secret@example.com/v1"],
    ["a query", "https://example.com/v1?key=sk"],
  ])("refuses %s as the server's URL", (_what, text) => {
    expect(typeof checkBaseUrl(text)).toBe("string");
  });
});

describe("the set-up step", () => {
  function setup(fetcher: typeof fetch, key?: string) {
    const views: SetupView[] = [];
    const saved: ProviderChoice[] = [];
    let stored = key;
    const flow = new ProviderSetup({
      fetch: fetcher,
      storedKey: async () => stored,
      askKey: async () => {
        stored = KEY;
        return true;
      },
      save: async (choice) => {
        saved.push(choice);
      },
      show: (view) => views.push(view),
    });
    return { flow, views, saved, last: () => views.at(-1)! };
  }

  it("goes from the servers found to a saved choice, and sends no key to a local server", async () => {
    const local = await serve(openai());
    // The probe's ports, pointed at the test's server: what probeLocal does with the real ones.
    const fetcher: typeof fetch = (url, init) => fetch(String(url).replace(":11434/", `:${local.port}/`), init);
    const h = setup(fetcher, KEY);
    await h.flow.open();
    expect(h.last().local).toEqual([{ name: "Ollama", baseUrl: "http://127.0.0.1:11434/v1", models: 2 }]);
    await h.flow.handle({ type: "setupServer", baseUrl: "http://127.0.0.1:11434/v1", local: true });
    expect(h.last()).toMatchObject({ models: ["qwen2.5-coder:1.5b", "llama3.1:8b"], model: "qwen2.5-coder:1.5b" });
    await h.flow.handle({ type: "setupModel", model: "llama3.1:8b" });
    expect(await h.flow.handle({ type: "setupUse" })).toBe(true);
    expect(h.saved).toEqual([{ baseUrl: "http://127.0.0.1:11434/v1", model: "llama3.1:8b", keyed: false }]);
    expect(local.seen.map((s) => s.authorization)).toEqual([undefined, undefined, undefined]);
  });

  it("lists a typed URL's models with the key the person stores, and saves after the test", async () => {
    const remote = await serve(openai(KEY));
    const h = setup(fetch);
    await h.flow.handle({ type: "setupServer", baseUrl: remote.baseUrl, local: false });
    expect(h.last().problem).toBe("The server refused the request: it needs an API key (HTTP 401: Incorrect API key provided: none). Use API key… to store one.");
    await h.flow.handle({ type: "setupKey" });
    expect(h.last()).toMatchObject({ keyStored: true, models: ["qwen2.5-coder:1.5b", "llama3.1:8b"], problem: undefined });
    expect(await h.flow.handle({ type: "setupUse" })).toBe(true);
    expect(h.saved).toEqual([{ baseUrl: remote.baseUrl, model: "qwen2.5-coder:1.5b", keyed: true }]);
    expect(JSON.stringify(h.views)).not.toContain(KEY);
  });

  it("saves nothing when the model does not answer", async () => {
    const broken = await serve((seen, response) =>
      seen.url === "/v1/models" ? json(response, 200, { data: [{ id: "m" }] }) : json(response, 500, { error: { message: "model failed to load" } }),
    );
    const h = setup(fetch);
    await h.flow.handle({ type: "setupServer", baseUrl: broken.baseUrl, local: false });
    expect(await h.flow.handle({ type: "setupUse" })).toBe(false);
    expect(h.saved).toEqual([]);
    expect(h.last().problem).toBe("The server answered HTTP 500: model failed to load.");
  });

  it("does not let a page claim a typed URL is a local server (which would skip the key)", async () => {
    const remote = await serve(openai());
    const h = setup(fetch, KEY);
    await h.flow.handle({ type: "setupServer", baseUrl: remote.baseUrl, local: true });
    expect(h.last().server).toEqual({ baseUrl: remote.baseUrl, local: false });
  });
});

describe("saving the choice", () => {
  function deps(settings: Record<string, unknown>) {
    const updates: [string, unknown][] = [];
    const restart = vi.fn(async () => undefined);
    return {
      updates,
      restart,
      deps: {
        configuration: () => ({ get: <T>(key: string) => settings[key] as T, inspect: () => undefined }),
        update: async (key: string, value: unknown) => {
          updates.push([key, value]);
        },
        restart,
      },
    };
  }

  it("gives a local server no key variable, so no key reaches it", async () => {
    const h = deps({ "provider.api_key_env": "OPENAI_API_KEY" });
    await saveProvider({ baseUrl: "http://127.0.0.1:11434/v1", model: "llama3.1:8b", keyed: false }, h.deps);
    expect(h.updates).toEqual([
      ["provider.base_url", "http://127.0.0.1:11434/v1"],
      ["provider.model", "llama3.1:8b"],
      ["provider.api_key_env", ""],
    ]);
    expect(h.restart).not.toHaveBeenCalled(); // the new variable restarts it (needsRestart)
  });

  it("keeps the key variable of a typed URL and restarts the server with the key", async () => {
    const h = deps({ "provider.api_key_env": "MY_KEY" });
    await saveProvider({ baseUrl: "https://api.openai.com/v1", model: "gpt-4o", keyed: true }, h.deps);
    expect(h.updates).toEqual([
      ["provider.base_url", "https://api.openai.com/v1"],
      ["provider.model", "gpt-4o"],
    ]);
    expect(h.restart).toHaveBeenCalledOnce();
  });
});
