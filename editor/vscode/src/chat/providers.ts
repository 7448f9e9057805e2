/**
 * The chat set-up's network side: finding OpenAI-compatible servers on this machine, listing the
 * models a server reports, and one small request that shows a model answers.
 *
 * Nothing here runs until the person opens the set-up: until they choose, no request leaves the
 * machine. The probe asks only 127.0.0.1, on the ports those servers use by default, with a short
 * timeout each; every request refuses redirects (a loopback answer cannot send it elsewhere), and
 * every answer is read up to MAX_BODY bytes. The API key, when there is one, goes only to the URL
 * the person typed, in the Authorization header, and never into a message shown or logged.
 */

import { LOCAL_SERVERS, type LocalCandidate } from "./localServers";

/** How long the probe waits for each loopback port (they answer in milliseconds, or not at all). */
export const PROBE_TIMEOUT_MS = 1500;
/** How long listing a server's models may take. */
export const LIST_TIMEOUT_MS = 15_000;
/** How long the test answer may take (a local model may load first). */
export const TEST_TIMEOUT_MS = 120_000;
/** The most of an answer read. */
export const MAX_BODY = 1 << 20;
/** The most models listed of one server. */
export const MAX_MODELS = 500;

/** The part of `fetch` used here (a seam: tests pass the real one, pointed at loopback servers). */
export type Fetcher = (url: string, init: RequestInit) => Promise<Response>;

export interface FoundServer {
  name: string;
  /** Up to and including `/v1`, as `lecode.provider.base_url` takes it. */
  baseUrl: string;
  models: string[];
}

/** A failure the set-up shows as it is: one sentence, no key in it. */
export class ProviderProblem extends Error {}

/** The base URL the person typed, checked: an absolute http(s) URL without credentials in it. */
export function checkBaseUrl(text: string): URL | string {
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    return "Type the server's URL, e.g. https://api.openai.com/v1";
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return "The URL must start with http:// or https://";
  }
  if (url.username !== "" || url.password !== "") {
    return "Leave the key out of the URL: use API key… (it is kept in VS Code's secret storage)";
  }
  if (url.search !== "" || url.hash !== "") {
    return "The URL ends at /v1: no ?query or #fragment";
  }
  return url;
}

/** `base` without a trailing slash: `/models` and `/chat/completions` are appended to it. */
export function baseOf(url: URL): string {
  return url.toString().replace(/\/+$/, "");
}

/** The body of `response`, at most MAX_BODY bytes (more is refused, not cut). */
async function boundedText(response: Response): Promise<string> {
  const reader = response.body?.getReader();
  if (reader === undefined) {
    return "";
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) {
      break;
    }
    size += value.byteLength;
    if (size > MAX_BODY) {
      await reader.cancel();
      throw new ProviderProblem(`the server's answer is larger than ${MAX_BODY} bytes`);
    }
    chunks.push(value);
  }
  const whole = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    whole.set(chunk, at);
    at += chunk.byteLength;
  }
  return new TextDecoder().decode(whole);
}

function headers(key: string | undefined, json = false): Record<string, string> {
  return { accept: "application/json", ...(json ? { "content-type": "application/json" } : {}), ...(key ? { authorization: `Bearer ${key}` } : {}) };
}

/** What a failed answer says, trimmed, with the key cut out of it. */
function said(text: string, key: string | undefined): string {
  let message = text;
  try {
    const parsed = JSON.parse(text) as { error?: { message?: unknown } | string; message?: unknown };
    const error = parsed.error;
    const found = typeof error === "string" ? error : typeof error?.message === "string" ? error.message : parsed.message;
    if (typeof found === "string") {
      message = found;
    }
  } catch {
    // not JSON: the text itself
  }
  if (key) {
    message = message.split(key).join("[key]");
  }
  message = message.replace(/\s+/g, " ").trim();
  return message.length > 200 ? `${message.slice(0, 199)}…` : message;
}

async function ask(fetcher: Fetcher, url: string, init: RequestInit, timeoutMs: number, key?: string): Promise<unknown> {
  let response: Response;
  try {
    response = await fetcher(url, { ...init, redirect: "error", signal: AbortSignal.timeout(timeoutMs) });
  } catch (error) {
    const name = (error as { name?: string }).name;
    if (name === "TimeoutError" || name === "AbortError") {
      throw new ProviderProblem(`no answer from ${new URL(url).origin} within ${Math.round(timeoutMs / 1000)} s`);
    }
    throw new ProviderProblem(`cannot reach ${new URL(url).origin}: is the server running?`);
  }
  const text = await boundedText(response);
  if (response.status === 401 || response.status === 403) {
    const why = said(text, key);
    throw new ProviderProblem(
      `the server refused the ${key ? "API key" : "request: it needs an API key"} (HTTP ${response.status}${why ? `: ${why}` : ""})`,
    );
  }
  if (!response.ok) {
    const why = said(text, key);
    throw new ProviderProblem(`the server answered HTTP ${response.status}${why ? `: ${why}` : ""}`);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new ProviderProblem("the server's answer is not JSON: is this an OpenAI-compatible URL (ending in /v1)?");
  }
}

/** The model IDs of an OpenAI `/models` answer (`{"data": [{"id": ...}]}`), in its order. */
export function modelIds(answer: unknown): string[] | undefined {
  const data = (answer as { data?: unknown } | null)?.data;
  if (!Array.isArray(data)) {
    return undefined;
  }
  const ids = data
    .map((entry) => (entry as { id?: unknown } | null)?.id)
    .filter((id): id is string => typeof id === "string" && id !== "" && id.length <= 256);
  return [...new Set(ids)].slice(0, MAX_MODELS);
}

/** The models the server at `baseUrl` reports (`GET /models`). */
export async function listModels(fetcher: Fetcher, baseUrl: string, key?: string, timeoutMs = LIST_TIMEOUT_MS): Promise<string[]> {
  const answer = await ask(fetcher, `${baseUrl}/models`, { method: "GET", headers: headers(key) }, timeoutMs, key);
  const ids = modelIds(answer);
  if (ids === undefined) {
    throw new ProviderProblem("the server's /models answer lists no models: is this an OpenAI-compatible URL (ending in /v1)?");
  }
  return ids;
}

/** The servers found on this machine's loopback ports, each with its models; asked at once. */
export async function probeLocal(fetcher: Fetcher, candidates: readonly LocalCandidate[] = LOCAL_SERVERS): Promise<FoundServer[]> {
  const found = await Promise.all(
    candidates.map(async ({ name, port }): Promise<FoundServer | undefined> => {
      const baseUrl = `http://127.0.0.1:${port}/v1`;
      try {
        return { name, baseUrl, models: await listModels(fetcher, baseUrl, undefined, PROBE_TIMEOUT_MS) };
      } catch {
        return undefined; // nothing there, or not an OpenAI-compatible server
      }
    }),
  );
  return found.filter((server): server is FoundServer => server !== undefined);
}

/**
 * Ask `model` for a one-word answer (not streamed, a few tokens, no memory, no tools): it shows
 * that the URL, the key and the model work together before chat relies on them.
 */
export async function testModel(fetcher: Fetcher, baseUrl: string, model: string, key?: string, timeoutMs = TEST_TIMEOUT_MS): Promise<void> {
  const body = JSON.stringify({ model, messages: [{ role: "user", content: "Reply with the word OK." }], max_tokens: 8, stream: false });
  const answer = await ask(fetcher, `${baseUrl}/chat/completions`, { method: "POST", headers: headers(key, true), body }, timeoutMs, key);
  if (!Array.isArray((answer as { choices?: unknown } | null)?.choices)) {
    throw new ProviderProblem("the server's answer has no choices: is this an OpenAI-compatible chat server?");
  }
}
