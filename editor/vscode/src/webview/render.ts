/**
 * Entries to DOM elements. Model text and server output go through renderMarkdown; everything else
 * (the person's message, tool arguments and output, fact texts, error sentences) is set as
 * `textContent`.
 */
import type { FactView } from "../chat/messages";
import type { InjectedFactModel } from "../common/protocol";
import { type MemoryWrite, factLabel, memoryWrites } from "../chat/memoryUsed";
import type { CommandEntry, Entry, Part, ToolPart, Turn } from "../chat/turn";
import { stopNote } from "../chat/turn";
import { markSecrets, renderMarkdown } from "./markdown";

/** What a click in the "memory used" list asks for. */
export type MemoryLink = { kind: "fact"; factId: number; revision: number } | { kind: "note"; file: string };

/** What the page gives the renderer: the links' and buttons' actions, and the facts it knows. */
export interface RenderContext {
  open(link: MemoryLink): void;
  copy(text: string): void;
  insert(text: string): void;
  facts: ReadonlyMap<number, FactView>;
}

function element<K extends keyof HTMLElementTagNameMap>(tag: K, className?: string, text?: string): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (className !== undefined) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function button(label: string, title: string, onClick: (button: HTMLButtonElement) => void, className = "icon"): HTMLButtonElement {
  const node = element("button", className, label);
  node.type = "button";
  node.title = title;
  node.setAttribute("aria-label", title);
  node.addEventListener("click", () => onClick(node));
  return node;
}

/** Every code block of rendered Markdown gets a bar with Copy and Insert (at the cursor). */
function withCodeButtons(block: HTMLElement, ctx: RenderContext): void {
  block.querySelectorAll("pre").forEach((pre) => {
    const code = pre.querySelector("code");
    const text = (code ?? pre).textContent ?? "";
    const language = /(?:^|\s)language-([\w+#-]+)/.exec(code?.className ?? "")?.[1];
    const bar = element("div", "code-bar");
    bar.append(
      element("span", "code-language", language ?? ""),
      button("Copy", "Copy the code", (copy) => {
        ctx.copy(text);
        copy.textContent = "Copied";
        copy.setAttribute("aria-label", "Copied");
      }),
      button("Insert", "Insert the code at the cursor of the editor", () => ctx.insert(text)),
    );
    const frame = element("div", "code-block");
    pre.replaceWith(frame);
    frame.append(bar, pre);
  });
}

function markdownBlock(text: string, ctx: RenderContext): HTMLElement {
  const block = element("div", "markdown");
  block.append(renderMarkdown(text));
  withCodeButtons(block, ctx);
  return block;
}

/** JSON indented for reading (tool arguments and results), or the text as it is. */
export function readable(text: string): string {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === "string" ? value : JSON.stringify(value, null, 2);
  } catch {
    return text;
  }
}

/** The argument that says what a call is about (a file, a path, a pattern, a fact), shortened. */
function subject(args: string): string {
  try {
    const value = JSON.parse(args) as Record<string, unknown>;
    for (const key of ["file", "path", "pattern", "query", "fact_id", "session_id"]) {
      const found = value[key];
      if (typeof found === "string" || typeof found === "number") {
        const shown = key === "fact_id" ? `#${found}` : String(found);
        return shown.length > 60 ? `${shown.slice(0, 59)}…` : shown;
      }
    }
  } catch {
    // no subject
  }
  return "";
}

function toolBlock(part: ToolPart): HTMLElement {
  const details = element("details", "tool");
  details.dataset.callId = part.callId;
  const status = part.output === undefined ? "running" : part.isError ? "failed" : "done";
  details.classList.add(status);
  const summary = element("summary");
  summary.append(element("span", "tool-name", part.name || "tool"), element("span", "tool-subject", subject(part.arguments)), element("span", "tool-status", status));
  details.append(summary, element("div", "label", "Arguments"), element("pre", "arguments", readable(part.arguments)));
  if (part.output !== undefined) {
    const output = element("pre", "output", readable(part.output));
    markSecrets(output);
    details.append(element("div", "label", "Result"), output);
  }
  return details;
}

function partBlock(part: Part, ctx: RenderContext): HTMLElement {
  switch (part.kind) {
    case "text":
      return markdownBlock(part.text, ctx);
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

function link(label: string, title: string, target: MemoryLink, ctx: RenderContext): HTMLButtonElement {
  return button(label, title, () => ctx.open(target), "link");
}

/** One fact the turn read: its ID and revision (a link to its evidence), its text, its drift. */
function factRow(fact: InjectedFactModel, ctx: RenderContext): HTMLElement {
  const view = ctx.facts.get(fact.factId);
  const row = element("li", "memory-fact");
  row.dataset.factId = String(fact.factId);
  const name = `#${fact.factId} r${fact.revision}`;
  const why = fact.reason ? `\nWhy: ${fact.reason}` : "";
  const target: MemoryLink = { kind: "fact", factId: fact.factId, revision: fact.revision };
  row.append(link(name, `Recall fact #${fact.factId}: open its evidence${why}`, target, ctx));
  const label = factLabel(fact.factId, fact.revision, view);
  row.append(element("span", label.known ? "fact-text" : "fact-text unknown", label.text));
  if (view?.drift !== undefined) {
    row.classList.add("drifted");
    row.append(element("span", "badge drift", view.drift));
  }
  if (view !== undefined && view.revision !== fact.revision) {
    row.append(element("span", "badge", `now r${view.revision}`));
  }
  if (fact.reason) {  // why ranked retrieval chose it: pinned, anchored in <path>, matched: <words>
    row.append(element("span", "fact-reason", fact.reason));
  }
  return row;
}

function writeRow(write: MemoryWrite, ctx: RenderContext): HTMLElement {
  const row = element("li", `memory-write ${write.outcome === "refused" ? "refused" : ""}`.trim());
  const { target } = write;
  const name = target.kind === "note" ? target.file : `fact #${target.factId}`;
  row.append(
    target.kind === "note" ? link(name, `Open ${name}`, { kind: "note", file: target.file }, ctx) : element("span", "fact-name", name),
    element("span", "badge write", write.outcome),
    element("span", "tool-name", write.tool),
  );
  return row;
}

function plural(count: number, one: string): string {
  return `${count} ${one}${count === 1 ? "" : "s"}`;
}

/**
 * The memory the turn used, collapsed to one line ("Memory used: 2 facts, MEMORY.md · changed
 * MEMORY.md"), opened to a list: each fact with its text and drift, the notes, then what the turn
 * changed, apart.
 */
function memoryBlock(turn: Turn, ctx: RenderContext): HTMLElement | undefined {
  const { facts, notes } = turn.memory;
  const writes = memoryWrites(turn);
  if (facts.length === 0 && notes.length === 0 && writes.length === 0) {
    return undefined;
  }
  const details = element("details", "memory");
  const drifted = facts.filter((fact) => ctx.facts.get(fact.factId)?.drift !== undefined).length;
  const read = [facts.length > 0 ? plural(facts.length, "fact") : "", ...notes].filter(Boolean).join(", ");
  const changed = writes.map((w) => (w.target.kind === "note" ? w.target.file : `fact #${w.target.factId}`)).join(", ");
  const summary = element("summary", undefined, `Memory used: ${read || "none read"}`);
  if (drifted > 0) {
    summary.append(element("span", "badge drift", `${drifted} drifted`));
  }
  if (changed !== "") {
    summary.append(element("span", "changed", ` · changed ${changed}`));
  }
  summary.title = [...facts.map((f) => `#${f.factId}: ${factLabel(f.factId, f.revision, ctx.facts.get(f.factId)).text}`), ...notes].join("\n");
  details.append(summary);
  if (facts.length > 0 || notes.length > 0) {
    const list = element("ul", "memory-read");
    list.setAttribute("aria-label", "Read");
    list.append(...facts.map((fact) => factRow(fact, ctx)));
    for (const file of notes) {
      const row = element("li", "memory-note");
      row.append(link(file, `Open ${file}`, { kind: "note", file }, ctx), element("span", "badge read", "read"));
      list.append(row);
    }
    details.append(element("div", "label", "Read"), list);
  }
  if (writes.length > 0) {
    const list = element("ul", "memory-changed");
    list.setAttribute("aria-label", "Changed");
    list.append(...writes.map((write) => writeRow(write, ctx)));
    details.append(element("div", "label", "Changed"), list);
  }
  return details;
}

function turnBlock(turn: Turn, ctx: RenderContext): HTMLElement {
  const block = element("article", `entry turn ${turn.state}`);
  if (turn.user !== undefined) {
    const user = element("div", "user", turn.user);
    markSecrets(user);
    block.append(user);
  }
  const answer = element("div", "answer");
  answer.append(...turn.parts.map((part) => partBlock(part, ctx)));
  if (turn.state === "running" && turn.parts.length === 0) {
    answer.append(element("div", "pending", "Thinking…"));
  }
  const note = stopNote(turn);
  if (note !== undefined) {
    answer.append(element("div", "stopped", note));
  }
  const memory = memoryBlock(turn, ctx);
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
 * An entry's element. `previous` is the element it replaces: tool calls and the memory list the
 * person opened stay open while the turn goes on streaming.
 */
export function renderEntry(entry: Entry, ctx: RenderContext, previous?: Element): HTMLElement {
  const block = entry.kind === "turn" ? turnBlock(entry, ctx) : commandBlock(entry);
  const opened = new Set(
    [...(previous?.querySelectorAll<HTMLDetailsElement>("details.tool[open]") ?? [])].map((details) => details.dataset.callId),
  );
  block.querySelectorAll<HTMLDetailsElement>("details.tool").forEach((details) => {
    details.open = opened.has(details.dataset.callId);
  });
  const memory = block.querySelector<HTMLDetailsElement>("details.memory");
  if (memory !== null) {
    memory.open = previous?.querySelector<HTMLDetailsElement>("details.memory")?.open === true;
  }
  return block;
}
