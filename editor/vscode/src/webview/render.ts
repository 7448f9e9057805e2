/**
 * Entries to DOM elements. Model text and server output go through renderMarkdown; everything else
 * (the person's message, tool arguments and output, error sentences) is set as `textContent`.
 */
import type { CommandEntry, Entry, MemoryUsed, Part, ToolPart, Turn } from "../chat/turn";
import { stopNote } from "../chat/turn";
import { renderMarkdown } from "./markdown";

/** What a click in the "memory used" line asks for. */
export type MemoryLink = { kind: "fact"; factId: number; revision: number } | { kind: "note"; file: string };

function element<K extends keyof HTMLElementTagNameMap>(tag: K, className?: string, text?: string): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (className !== undefined) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function markdownBlock(text: string): HTMLElement {
  const block = element("div", "markdown");
  block.append(renderMarkdown(text));
  return block;
}

/** Tool arguments as the model wrote them, indented when they are JSON. */
function prettyArguments(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

function toolBlock(part: ToolPart): HTMLElement {
  const details = element("details", "tool");
  details.dataset.callId = part.callId;
  const status = part.output === undefined ? "running" : part.isError ? "failed" : "done";
  details.classList.add(status);
  const summary = element("summary");
  summary.append(element("span", "tool-name", part.name || "tool"), element("span", "tool-status", status));
  details.append(summary, element("div", "label", "Arguments"), element("pre", "arguments", prettyArguments(part.arguments)));
  if (part.output !== undefined) {
    details.append(element("div", "label", "Result"), element("pre", "output", part.output));
  }
  return details;
}

function partBlock(part: Part): HTMLElement {
  switch (part.kind) {
    case "text":
      return markdownBlock(part.text);
    case "tool":
      return toolBlock(part);
    case "error": {
      const block = element("div", "error", part.message);
      block.setAttribute("role", "alert");
      return block;
    }
    case "notice":
      return element("div", `notice ${part.topic}`, part.message);
  }
}

/** The hover of a fact of the "memory used" line: why the server chose it (a `title`: text). */
function factTitle(fact: MemoryUsed["facts"][number]): string {
  const why = fact.reason ? `\nWhy: ${fact.reason}` : "";
  return `Recall fact #${fact.factId}${why}`;
}

function memoryLine(memory: MemoryUsed, open: (link: MemoryLink) => void): HTMLElement | undefined {
  if (memory.facts.length === 0 && memory.notes.length === 0) {
    return undefined;
  }
  const line = element("div", "memory", "Memory used: ");
  const link = (label: string, title: string, target: MemoryLink): HTMLButtonElement => {
    const button = element("button", "link", label);
    button.type = "button";
    button.title = title;
    button.addEventListener("click", () => open(target));
    return button;
  };
  const links = [
    ...memory.facts.map((fact) =>
      link(`#${fact.factId} r${fact.revision}`, factTitle(fact), { kind: "fact", factId: fact.factId, revision: fact.revision }),
    ),
    ...memory.notes.map((file) => link(file, `Open ${file}`, { kind: "note", file })),
  ];
  links.forEach((item, index) => line.append(...(index === 0 ? [item] : [", ", item])));
  return line;
}

function turnBlock(turn: Turn, open: (link: MemoryLink) => void): HTMLElement {
  const block = element("article", `entry turn ${turn.state}`);
  if (turn.user !== undefined) {
    block.append(element("div", "user", turn.user));
  }
  const answer = element("div", "answer");
  answer.append(...turn.parts.map(partBlock));
  if (turn.state === "running" && turn.parts.length === 0) {
    answer.append(element("div", "pending", "Thinking…"));
  }
  const note = stopNote(turn);
  if (note !== undefined) {
    answer.append(element("div", "stopped", note));
  }
  const memory = memoryLine(turn.memory, open);
  if (memory !== undefined) {
    answer.append(memory);
  }
  block.append(answer);
  return block;
}

function commandBlock(entry: CommandEntry): HTMLElement {
  const block = element("article", `entry command ${entry.state}`);
  block.append(element("div", "user", entry.line));
  if (entry.state === "running") {
    block.append(element("div", "pending", "Running…"));
  } else if (entry.state === "failed") {
    const error = element("div", "error", entry.output);
    error.setAttribute("role", "alert");
    block.append(error);
  } else {
    // Command output is plain text laid out in columns (help, lists, JSON): shown as it is.
    block.append(element("pre", "output", entry.output));
  }
  return block;
}

/**
 * An entry's element. `previous` is the element it replaces: tool calls the person opened stay
 * open while the turn goes on streaming.
 */
export function renderEntry(entry: Entry, open: (link: MemoryLink) => void, previous?: Element): HTMLElement {
  const block = entry.kind === "turn" ? turnBlock(entry, open) : commandBlock(entry);
  const opened = new Set(
    [...(previous?.querySelectorAll<HTMLDetailsElement>("details.tool[open]") ?? [])].map((details) => details.dataset.callId),
  );
  block.querySelectorAll<HTMLDetailsElement>("details.tool").forEach((details) => {
    details.open = opened.has(details.dataset.callId);
  });
  return block;
}
