/**
 * The OpenAI-compatible servers the chat's set-up looks for on this machine: each listens on
 * 127.0.0.1 by default, on its usual port. Shared by the host (which asks them, providers.ts) and
 * the page (which names them while it looks).
 */

export interface LocalCandidate {
  name: string;
  port: number;
}

export const LOCAL_SERVERS: readonly LocalCandidate[] = [
  { name: "Ollama", port: 11434 },
  { name: "llama.cpp server", port: 8080 },
  { name: "LM Studio", port: 1234 },
  { name: "vLLM", port: 8000 },
];
