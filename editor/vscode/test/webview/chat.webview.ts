/**
 * The chat page in real headless Chromium, with the extension's own HTML, CSP and bundled script,
 * wired to a real ChatController over a fake server: streamed deltas render as Markdown with code
 * blocks, the stop button cancels the send and the page leaves the busy state, HTML and script in
 * model text, tool output and history stay inert, `/memory` completion fills the box, and the
 * "memory used" line opens the right fact and note. Run `npm run test:webview` (it builds
 * dist/webview.js first); Chromium is /usr/bin/chromium or $CHROMIUM_PATH.
 */
// covers P7 (chat panel, webview security), P3 (chat streaming), T5 (/memory in chat)
import type { Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import type { ChatDeps } from "../../src/chat/controller";
import type { ChatDeltaParams } from "../../src/common/protocol";
import { Requests } from "../../src/common/protocol";
import { CONFIGURED, FakeServer, type PendingSend, chatDeps } from "../fakes";
import { Browser, type ChatPage, PageServer, openChat, windowFlag } from "./page";

const APP = "file:///src/app";
const SESSION = "20261129T100000Z-3f2a9c41";
const OTHER = "20261130T100000Z-0badcafe";
const USAGE = { calls: 1, promptTokens: 5, completionTokens: 2, totalTokens: 7, unknownUsageCalls: 0 };

const pages = new PageServer();
const browser = new Browser();
let open: ChatPage[] = [];

beforeAll(async () => {
  await pages.start();
  await browser.start();
});

afterEach(async () => {
  await Promise.all(open.map(({ page }) => page.close()));
  open = [];
});

afterAll(async () => {
  await browser.stop();
  await pages.stop();
});

interface Harness extends ChatPage {
  server: FakeServer;
  deps: ChatDeps;
  /** The next lecode/chat/send the page caused. */
  nextSend(): Promise<PendingSend>;
  /** Stream deltas of the running turn, seq from 0. */
  stream(...pieces: Partial<ChatDeltaParams>[]): void;
}

async function chatPage(history: unknown[] = [], sessions: unknown[] = [{ sessionId: SESSION, title: "build", created: "2026-11-29T10:00:00Z", records: 1 }]): Promise<Harness> {
  const server = new FakeServer()
    .on(Requests.sessionList, () => ({ sessions }))
    .on(Requests.chatHistory, () => ({ items: history, truncated: false, usage: { ...USAGE, calls: 2, unknownUsageCalls: 1 } }))
    .holdSends();
  const deps: ChatDeps = chatDeps(server, APP);
  const opened = await openChat(browser.context!, pages.origin, deps);
  open.push(opened);
  // The page asked for its state: the session list is drawn.
  await opened.page.locator("#session option", { hasText: "build" }).waitFor({ state: "attached" });
  let seq = 0;
  let sends = 0;
  return {
    ...opened,
    server,
    deps,
    async nextSend() {
      sends++;
      await vi.waitFor(() => expect(server.sends?.length).toBe(sends));
      seq = 0;
      return server.sends![sends - 1];
    },
    stream(...pieces) {
      for (const piece of pieces) {
        opened.chat.handleDelta({ sessionId: SESSION, turnId: "t-1", seq: seq++, kind: "text", ...piece } as ChatDeltaParams);
      }
    },
  };
}

async function ask(page: Page, text: string): Promise<void> {
  await page.locator("#input").fill(text);
  await page.locator("#input").press("Enter");
}

const lastTurn = (page: Page) => page.locator("#log article.turn").last();

describe("the chat page", () => {
  it("renders streamed deltas in order as Markdown, with a code block", async () => {
    const h = await chatPage();
    await ask(h.page, "How do I build?");
    const send = await h.nextSend();
    expect(send.params).toEqual({ workspaceUri: APP, sessionId: SESSION, text: "How do I build?" });
    h.stream({ text: "Run **both**:\n\n```sh\nmake" }, { text: " build\nmake" }, { text: " test\n```\n" });
    await lastTurn(h.page).locator("pre code.language-sh", { hasText: "make test" }).waitFor();
    expect(await lastTurn(h.page).getAttribute("class")).toBe("entry turn running");
    h.stream({ text: "Then open `dist/`." });
    send.resolve({ turnId: "t-1", stopReason: "stop", usage: USAGE });
    await h.page.locator("#log article.turn.done").waitFor();
    const turn = lastTurn(h.page);
    expect(await turn.locator(".user").textContent()).toBe("How do I build?");
    expect(await turn.locator(".markdown strong").textContent()).toBe("both");
    expect(await turn.locator("pre code").textContent()).toBe("make build\nmake test\n");
    expect(await turn.locator(".markdown p").last().innerHTML()).toBe("Then open <code>dist/</code>.");
  });

  it("shows the session's usage total, plain text, and adds each turn's usage", async () => {
    // covers C10 (issue 11, item 7)
    const h = await chatPage();
    const usage = h.page.locator("#usage");
    await usage.filter({ hasText: "in 2 calls" }).waitFor();
    expect(await usage.textContent()).toBe("Session usage: 7 tokens (5 prompt, 2 completion) in 2 calls; usage unknown for 1 of them");
    await ask(h.page, "q");
    (await h.nextSend()).resolve({ turnId: "t-1", stopReason: "stop", usage: USAGE });
    await usage.filter({ hasText: "in 3 calls" }).waitFor();
    expect(await usage.textContent()).toBe("Session usage: 14 tokens (10 prompt, 4 completion) in 3 calls; usage unknown for 1 of them");
  });

  it("shows a code block as one block even under VS Code's default webview styles", async () => {
    const h = await chatPage();
    // What VS Code puts into every webview (its _defaultStyles): inline code gets a background,
    // which inside <pre> painted a grey band behind each line.
    // It comes first in <head>; the page's CSP admits it here by the page's nonce.
    await h.page.evaluate(`(() => {
      const style = document.createElement("style");
      style.nonce = document.querySelector("script[nonce]").nonce;
      style.textContent = "code { color: rgb(200, 0, 0); background-color: rgb(90, 90, 90); padding: 1px 3px; border-radius: 4px; }";
      document.head.prepend(style);
    })()`);
    await ask(h.page, "How?");
    const send = await h.nextSend();
    h.stream({ text: "```sh\nmake build\nmake test\n```\n\nThen `make`." });
    send.resolve({ turnId: "t-1", stopReason: "stop", usage: USAGE });
    await h.page.locator("#log article.turn.done").waitFor();
    const style = (selector: string) =>
      lastTurn(h.page)
        .locator(selector)
        .evaluate((element) => {
          const view = globalThis as unknown as { getComputedStyle(e: unknown): Record<string, string> };
          const computed = view.getComputedStyle(element);
          return { background: computed.backgroundColor, padding: computed.padding, radius: computed.borderRadius };
        });
    expect(await style("pre code")).toEqual({ background: "rgba(0, 0, 0, 0)", padding: "0px", radius: "0px" });
    // Inline code keeps VS Code's look.
    expect((await style("p code")).background).toBe("rgb(90, 90, 90)");
  });

  it("keeps a long stream in order (2,000 deltas)", async () => {
    const h = await chatPage();
    await ask(h.page, "count");
    const send = await h.nextSend();
    const words = Array.from({ length: 2000 }, (_, i) => `w${i} `);
    const started = performance.now();
    h.stream(...words.map((text) => ({ text })));
    send.resolve({ turnId: "t-1", stopReason: "stop", usage: USAGE });
    await h.page.locator("#log article.turn.done").waitFor();
    const elapsed = performance.now() - started;
    expect(await lastTurn(h.page).locator(".markdown p").textContent()).toBe(words.join("").trim());
    console.log(`2,000 deltas posted, drawn and finished in ${elapsed.toFixed(0)} ms`);
  });

  it("cancels the send with the stop button, and leaves the busy state when the turn ends", async () => {
    const h = await chatPage();
    await ask(h.page, "Write a long essay");
    const send = await h.nextSend();
    h.stream({ text: "Once upon" });
    const stop = h.page.locator("#stop");
    await stop.waitFor({ state: "visible" });
    expect(await h.page.locator("#send").isHidden()).toBe(true);
    await stop.click();
    expect(h.fromPage.at(-1)).toEqual({ type: "cancel" });
    expect(send.signal?.aborted).toBe(true);
    // The server answers a cancelled turn with stopReason "cancelled".
    send.resolve({ turnId: "t-1", stopReason: "cancelled", usage: USAGE });
    await h.page.locator("#send").waitFor({ state: "visible" });
    expect(await stop.isHidden()).toBe(true);
    expect(await lastTurn(h.page).locator(".stopped").textContent()).toBe("Stopped.");
    expect(await lastTurn(h.page).locator(".markdown p").textContent()).toBe("Once upon");
  });

  it("renders HTML and script in model text, tool output and history inert", async () => {
    const attack = `<img src=x onerror="window.__pwned='img'"><script>window.__pwned='script'</script>`;
    const h = await chatPage([
      { seq: 1, turnId: "t-0", kind: "user", text: `${attack} from history` },
      { seq: 2, turnId: "t-0", kind: "text", text: `<iframe src="javascript:window.__pwned='iframe'"></iframe>` },
    ]);
    await h.page.locator("#log .user", { hasText: "from history" }).waitFor();
    await ask(h.page, "hello");
    const send = await h.nextSend();
    h.stream(
      { text: `${attack}\n\n` },
      { text: "[click me](javascript:window.__pwned='link') and [run](command:lecode.forgetFact?%5B1%5D) and <javascript:alert(1)>\n\n" },
      { text: "[mail](mailto:a@example.com) and [local](./notes/x.md)\n\n" },
      { text: '<a href="https://example.com" onclick="window.__pwned=\'a\'">html link</a> and [docs](https://example.com/docs)' },
      { kind: "toolCall", callId: "c1", name: "memory_read", arguments: '{"file":"<b>MEMORY.md</b>"}' },
      { kind: "toolResult", callId: "c1", name: "memory_read", output: attack, isError: false },
    );
    send.resolve({ turnId: "t-1", stopReason: "stop", usage: USAGE });
    await h.page.locator("#log article.turn.done").nth(1).waitFor();
    await h.page.locator("details.tool").click();

    const log = h.page.locator("#log");
    expect(await log.locator("img, script, iframe, b").count()).toBe(0);
    expect(await log.locator("[onerror], [onclick]").count()).toBe(0);
    // The tags are shown as the text they are.
    expect(await lastTurn(h.page).locator(".markdown p").first().textContent()).toBe(attack);
    expect(await lastTurn(h.page).locator("pre.output").textContent()).toBe(attack);
    // markdown-it leaves javascript: links as text; DOMPurify takes the href off the command: link
    // markdown-it makes; only http(s) links keep one (a bare URL in the escaped tag is linkified).
    expect(await lastTurn(h.page).locator(".markdown p").nth(1).textContent()).toBe(
      "[click me](javascript:window.__pwned='link') and run and <javascript:alert(1)>",
    );
    const hrefs = await log.locator("a").evaluateAll((links) => links.map((a) => [a.textContent, a.getAttribute("href")]));
    expect(hrefs).toEqual([
      ["run", null],
      ["mail", null],
      ["local", null],
      ["https://example.com", "https://example.com"],
      ["docs", "https://example.com/docs"],
    ]);
    await log.locator("a", { hasText: "run" }).click();
    await log.locator("a", { hasText: "local" }).click();
    await log.locator("a", { hasText: "docs" }).click();
    await vi.waitFor(() => expect(h.deps.openExternal).toHaveBeenCalled());
    expect(h.fromPage.filter((m) => (m as { type: string }).type === "openLink")).toEqual([
      { type: "openLink", href: "https://example.com/docs" },
    ]);
    expect(vi.mocked(h.deps.openExternal).mock.calls).toEqual([["https://example.com/docs"]]);
    expect(await windowFlag(h.page, "__pwned")).toBeUndefined();
    // The page's CSP is in force: even a script element added to the page without the nonce is refused.
    await h.page.evaluate(() => {
      const doc = (globalThis as unknown as { document: { createElement(t: string): { textContent: string }; body: { append(n: unknown): void } } })
        .document;
      const script = doc.createElement("script");
      script.textContent = "window.__pwned = 'inline'";
      doc.body.append(script);
    });
    expect(await windowFlag(h.page, "__pwned")).toBeUndefined();
    // Nothing was fetched for the injected <img src=x> (the browser asks for its favicon itself).
    expect(pages.requests.filter((path) => !["/", "/dist/webview.js", "/media/chat.css", "/favicon.ico"].includes(path))).toEqual([]);
  });

  it("shows a redacted secret as its marker with a tooltip of its kind, in history, answers and tool results", async () => {
    // covers P5 (the chat view shows the marker where the secret was; issue 27 item 4)
    const marker = "[secret:github-token:3fa9c2d1]";
    const h = await chatPage([{ seq: 1, turnId: "t-0", kind: "user", text: `deploy fails with ${marker}, why?` }]);
    await h.page.locator("#log .user", { hasText: "deploy fails" }).waitFor();
    await ask(h.page, "and the key?");
    const send = await h.nextSend();
    h.stream(
      { text: "The key `[secret:stripe-key:0a1b2c3d]` and <b>[secret:aws-access-key:deadbeef]</b> were redacted." },
      { kind: "toolCall", callId: "c1", name: "read", arguments: '{"path":"settings.py"}' },
      { kind: "toolResult", callId: "c1", name: "read", output: "STRIPE_KEY = \"[secret:stripe-key:0a1b2c3d]\"", isError: false },
    );
    send.resolve({ turnId: "t-1", stopReason: "stop", usage: USAGE });
    await h.page.locator("#log article.turn.done").nth(1).waitFor();
    await h.page.locator("details.tool").click();
    const secrets = await h.page
      .locator("#log span.secret")
      .evaluateAll((spans) => spans.map((s) => [s.textContent, s.getAttribute("title"), s.children.length]));
    expect(secrets).toEqual([
      [marker, "A github-token was here: lecode-ls redacted it before it was stored", 0],
      ["[secret:stripe-key:0a1b2c3d]", "A stripe-key was here: lecode-ls redacted it before it was stored", 0],
      ["[secret:aws-access-key:deadbeef]", "A aws-access-key was here: lecode-ls redacted it before it was stored", 0],
      ["[secret:stripe-key:0a1b2c3d]", "A stripe-key was here: lecode-ls redacted it before it was stored", 0],
    ]);
    // The text around each marker is kept, and the tag in the answer stayed text.
    expect(await h.page.locator("#log .user").first().textContent()).toBe(`deploy fails with ${marker}, why?`);
    expect(await h.page.locator("#log b").count()).toBe(0);
  });

  it("completes /memory and its subcommands in the text box, and shows the command's output in place", async () => {
    const h = await chatPage();
    h.server.on(Requests.command, () => ({ output: "notes/build.md:1: Run `make`." }));
    const input = h.page.locator("#input");
    const options = h.page.locator("#completions [role=option] .label");
    await input.pressSequentially("/me");
    expect(await options.allTextContents()).toEqual(["/memory"]);
    await input.press("Enter");
    expect(await input.inputValue()).toBe("/memory ");
    expect(await options.count()).toBe(13);
    await input.pressSequentially("se");
    expect(await options.allTextContents()).toEqual(["/memory search"]);
    await options.first().click();
    expect(await input.inputValue()).toBe("/memory search ");
    expect(await h.page.locator("#completions").isHidden()).toBe(true);
    await input.pressSequentially("make");
    await input.press("Enter");
    await h.page.locator("#log article.command.done").waitFor();
    expect(h.fromPage.at(-1)).toEqual({ type: "send", text: "/memory search make" });
    expect(h.server.calls.at(-1)).toEqual({
      method: Requests.command,
      params: { workspaceUri: APP, sessionId: SESSION, line: "/memory search make" },
    });
    expect(await h.page.locator("#log article.command pre.output").textContent()).toBe(
      "notes/build.md:1: Run `make`.",
    );
    expect(await input.inputValue()).toBe("");
  });

  it("moves through completions with the arrow keys and closes them with Escape", async () => {
    const h = await chatPage();
    const input = h.page.locator("#input");
    await input.pressSequentially("/memory re");
    await input.press("ArrowDown");
    await input.press("Tab");
    expect(await input.inputValue()).toBe("/memory read ");
    await input.fill("/");
    await input.press("Escape");
    expect(await h.page.locator("#completions").isHidden()).toBe(true);
  });

  it("names each fact the answer used by its text, marks a drifted one, and tells what it changed", async () => {
    // covers issue 30, item 3: "memory used" was `#3 r2` with no text, and a write read like a read
    const h = await chatPage();
    vi.mocked(h.deps.facts.lookup).mockResolvedValue([
      { factId: 12, revision: 2, status: "valid", text: "We indent with tabs." },
      { factId: 3, revision: 2, status: "valid", text: 'app.py contains "GREETING = \\"hello\\""', drift: "changed: app.py:2" },
    ]);
    await ask(h.page, "What do we know?");
    const send = await h.nextSend();
    h.stream(
      { kind: "memory", facts: [{ factId: 12, revision: 2, reason: "matched: tabs, <b>x</b>" }], notes: ["MEMORY.md"] },
      { kind: "toolCall", callId: "c1", name: "memory_write", arguments: '{"file":"scratchpad.md","content":"- [ ] tabs","mode":"append"}' },
      { kind: "toolResult", callId: "c1", name: "memory_write", output: '{"ok":true}', isError: false },
      { text: "We use tabs." },
      { kind: "memory", facts: [{ factId: 12, revision: 2 }, { factId: 3, revision: 1 }], notes: ["MEMORY.md", "scratchpad.md"] },
    );
    send.resolve({ turnId: "t-1", stopReason: "stop", usage: USAGE });
    const memory = lastTurn(h.page).locator("details.memory");
    await memory.locator("summary", { hasText: "1 drifted" }).waitFor();
    expect(await memory.locator("summary").textContent()).toBe("Memory used: 2 facts, MEMORY.md, scratchpad.md1 drifted · changed scratchpad.md");
    await memory.locator("summary").click();
    const facts = memory.locator("li.memory-fact");
    expect(await facts.allTextContents()).toEqual([
      "#12 r2We indent with tabs.matched: tabs, <b>x</b>",
      '#3 r1app.py contains "GREETING = \\"hello\\""changed: app.py:2now r2',
    ]);
    expect(await memory.locator("li.memory-fact.drifted").count()).toBe(1);
    // Why each fact was chosen shows beside it and on hover, as text.
    expect(await facts.nth(0).locator("button").getAttribute("title")).toBe("Recall fact #12: open its evidence\nWhy: matched: tabs, <b>x</b>");
    expect(await facts.nth(1).locator("button").getAttribute("title")).toBe("Recall fact #3: open its evidence");
    expect(await memory.locator("ul.memory-changed li").allTextContents()).toEqual(["scratchpad.mdwrittenmemory_write"]);
    await facts.nth(1).locator("button").click();
    await memory.locator("ul.memory-read button", { hasText: "MEMORY.md" }).click();
    await vi.waitFor(() => expect(h.deps.openNote).toHaveBeenCalled());
    expect(h.fromPage.slice(-2)).toEqual([
      { type: "openFact", factId: 3, revision: 1 },
      { type: "openNote", file: "MEMORY.md" },
    ]);
    expect(vi.mocked(h.deps.openFact).mock.calls).toEqual([[3, 1, APP]]);
    expect(vi.mocked(h.deps.openNote).mock.calls).toEqual([["MEMORY.md", APP]]);
  });

  it("highlights a labelled code block in the theme's colours, and copies it and inserts it through the host", async () => {
    // covers issue 30, item 3: code blocks beside Copilot Chat's
    const h = await chatPage();
    await h.page.evaluate(() => {
      const body = (globalThis as unknown as { document: { body: { style: { setProperty(k: string, v: string): void } } } }).document.body;
      body.style.setProperty("--vscode-debugTokenExpression-boolean", "rgb(1, 2, 3)");
      body.style.setProperty("--vscode-debugTokenExpression-string", "rgb(4, 5, 6)");
      // A light theme's code block has the side bar's background: its edge is the widget border.
      body.style.setProperty("--vscode-editorWidget-border", "rgb(7, 8, 9)");
    });
    await ask(h.page, "Show me");
    const send = await h.nextSend();
    h.stream({ text: '```python\ndef greet():\n    return "hello"\n```\n' });
    send.resolve({ turnId: "t-1", stopReason: "stop", usage: USAGE });
    await h.page.locator("#log article.turn.done").waitFor(); // no redraw comes after
    const block = lastTurn(h.page).locator(".code-block");
    await block.waitFor();
    const color = (selector: string) => block.locator(selector).first().evaluate((e) => (globalThis as unknown as { getComputedStyle(x: unknown): { color: string } }).getComputedStyle(e).color);
    expect(await block.locator(".hljs-keyword").allTextContents()).toEqual(["def", "return"]);
    expect(await color(".hljs-keyword")).toBe("rgb(1, 2, 3)");
    expect(await color(".hljs-string")).toBe("rgb(4, 5, 6)");
    expect(await block.locator(".code-language").textContent()).toBe("python");
    const edge = await block.evaluate((e) => (globalThis as unknown as { getComputedStyle(x: unknown): { borderTopColor: string; borderTopStyle: string } }).getComputedStyle(e));
    expect([edge.borderTopStyle, edge.borderTopColor]).toEqual(["solid", "rgb(7, 8, 9)"]);
    await block.getByRole("button", { name: "Copy the code" }).click();
    await block.getByRole("button", { name: "Copied" }).waitFor();
    await block.getByRole("button", { name: "Insert the code at the cursor of the editor" }).click();
    const code = 'def greet():\n    return "hello"\n';
    await vi.waitFor(() => expect(h.deps.insert).toHaveBeenCalled());
    expect(vi.mocked(h.deps.copy).mock.calls).toEqual([[code]]);
    expect(vi.mocked(h.deps.insert).mock.calls).toEqual([[code]]);
  });

  it("draws tables with rules and tool results as indented JSON that wraps", async () => {
    const h = await chatPage();
    await ask(h.page, "Compare");
    const send = await h.nextSend();
    h.stream(
      { kind: "toolCall", callId: "c1", name: "memory_read", arguments: '{"file":"MEMORY.md"}' },
      { kind: "toolResult", callId: "c1", name: "memory_read", output: '{"file":"MEMORY.md","content":"' + "x".repeat(300) + '"}', isError: false },
      { text: "| tool | speed |\n|---|---|\n| make | fast |\n" },
    );
    send.resolve({ turnId: "t-1", stopReason: "stop", usage: USAGE });
    await h.page.locator("#log article.turn.done").waitFor(); // no redraw comes after
    const turn = lastTurn(h.page);
    await turn.locator("table").waitFor();
    const border = await turn.locator("td").first().evaluate((e) => (globalThis as unknown as { getComputedStyle(x: unknown): { borderTopStyle: string } }).getComputedStyle(e).borderTopStyle);
    expect(border).toBe("solid");
    expect(await turn.locator("details.tool summary").textContent()).toBe("memory_readMEMORY.mddone");
    await turn.locator("details.tool summary").click();
    const output = turn.locator("pre.output");
    expect(await output.textContent()).toBe(`{\n  "file": "MEMORY.md",\n  "content": "${"x".repeat(300)}"\n}`);
    const fits = await output.evaluate((e) => (e as unknown as { scrollWidth: number; clientWidth: number }).scrollWidth <= (e as unknown as { clientWidth: number }).clientWidth);
    expect(fits).toBe(true);
  });

  it("keeps following the answer when the view gets smaller", async () => {
    // A view that shrank (the Memory view opened above it) kept its top in sight, and the next
    // answer streamed out of sight below.
    const h = await chatPage();
    await h.page.setViewportSize({ width: 400, height: 900 });
    await ask(h.page, "First");
    const first = await h.nextSend();
    h.stream({ text: Array.from({ length: 12 }, (_, i) => `line ${i}`).join("\n\n") });
    first.resolve({ turnId: "t-1", stopReason: "stop", usage: USAGE });
    await h.page.locator("#log article.turn.done").waitFor();
    await h.page.setViewportSize({ width: 400, height: 300 });
    const log = h.page.locator("#log");
    type Box = { scrollHeight: number; scrollTop: number; clientHeight: number };
    const gap = () => log.evaluate((e) => (e as unknown as Box).scrollHeight - (e as unknown as Box).scrollTop - (e as unknown as Box).clientHeight);
    await expect.poll(gap, { timeout: 10_000 }).toBeLessThan(2);
    expect(await log.evaluate((e) => (e as unknown as Box).scrollHeight > (e as unknown as Box).clientHeight)).toBe(true);
    // Scrolled up by the person, the log stays where they read while the answer streams on; a
    // message sent brings it back to the newest.
    await log.evaluate((e) => ((e as unknown as Box).scrollTop = 0));
    await expect.poll(gap, { timeout: 10_000 }).toBeGreaterThan(40);
    await ask(h.page, "Second");
    const second = await h.nextSend();
    await expect.poll(gap, { timeout: 10_000 }).toBeLessThan(2);
    await log.evaluate((e) => ((e as unknown as Box).scrollTop = 0));
    h.stream({ text: "more" });
    second.resolve({ turnId: "t-1", stopReason: "stop", usage: USAGE });
    await h.page.locator("#log article.turn.done", { hasText: "more" }).waitFor();
    expect(await log.evaluate((e) => (e as unknown as Box).scrollTop)).toBe(0);
  });

  it("draws code blocks and table rules in the contrast border of a high-contrast theme", async () => {
    // covers issue 30, item 3: colours from the theme's variables in high-contrast themes too
    const h = await chatPage();
    await h.page.evaluate(() => {
      const body = (globalThis as unknown as { document: { body: { classList: { add(c: string): void }; style: { setProperty(k: string, v: string): void } } } }).document.body;
      body.classList.add("vscode-high-contrast"); // the class VS Code gives the page's body
      body.style.setProperty("--vscode-contrastBorder", "rgb(10, 20, 30)");
      body.style.setProperty("--vscode-widget-border", "rgb(7, 8, 9)");
    });
    await ask(h.page, "Compare");
    const send = await h.nextSend();
    h.stream({ text: "```sh\nmake\n```\n\n| tool | speed |\n|---|---|\n| make | fast |\n" });
    send.resolve({ turnId: "t-1", stopReason: "stop", usage: USAGE });
    await h.page.locator("#log article.turn.done").waitFor(); // no redraw comes after
    const turn = lastTurn(h.page);
    const edge = (selector: string) =>
      turn.locator(selector).first().evaluate((e) => (globalThis as unknown as { getComputedStyle(x: unknown): { borderTopColor: string } }).getComputedStyle(e).borderTopColor);
    expect(await edge(".code-block")).toBe("rgb(10, 20, 30)");
    expect(await edge("td")).toBe("rgb(10, 20, 30)");
  });

  it("stops a streaming answer with Escape, and takes the cursor when the view is opened", async () => {
    const h = await chatPage();
    h.chat.focus();
    await vi.waitFor(async () => expect(await h.page.evaluate(() => (globalThis as unknown as { document: { activeElement: { id: string } } }).document.activeElement.id)).toBe("input"));
    await ask(h.page, "Write a long essay");
    const send = await h.nextSend();
    h.stream({ text: "Once upon" });
    await h.page.locator("#stop").waitFor({ state: "visible" });
    await h.page.keyboard.press("Escape");
    expect(h.fromPage.at(-1)).toEqual({ type: "cancel" });
    expect(send.signal?.aborted).toBe(true);
    send.resolve({ turnId: "t-1", stopReason: "cancelled", usage: USAGE });
    await lastTurn(h.page).locator(".stopped", { hasText: "Stopped." }).waitFor();
  });

  it("lists chats apart from the sessions lecode keeps, with rename and delete for the one shown", async () => {
    const h = await chatPage([], [
      { sessionId: SESSION, title: "build", created: "2026-11-29T10:00:00Z", records: 1, origin: "chat" },
      { sessionId: OTHER, title: "Remembered in the editor", created: "2026-11-30T10:00:00Z", records: 3, origin: "editor" },
    ]);
    const groups = await h.page.locator("#session optgroup").evaluateAll((nodes) =>
      nodes.map((g) => [g.getAttribute("label"), [...g.querySelectorAll("option")].map((o) => o.getAttribute("value"))]),
    );
    expect(groups).toEqual([
      ["Chats", [SESSION]],
      ["Remembered, MCP and imported", [OTHER]],
    ]);
    expect(await h.page.locator("#session").inputValue()).toBe(SESSION);
    await h.page.locator("#rename").click();
    await h.page.locator("#delete").click();
    await vi.waitFor(() => expect(h.deps.deleteSession).toHaveBeenCalled());
    expect(h.fromPage.slice(-2)).toEqual([
      { type: "renameSession", sessionId: SESSION },
      { type: "deleteSession", sessionId: SESSION },
    ]);
  });

  it("shows the set-up step while no model is chosen, and the chat once one is", async () => {
    // covers issue 30, item 2: a set-up step, not a silent default
    let configured = false;
    const server = new FakeServer()
      .on(Requests.providerInfo, () => (configured ? CONFIGURED : { ...CONFIGURED, configured: false, baseUrl: null }))
      .on(Requests.sessionList, () => ({ sessions: [] }));
    const deps = chatDeps(server, APP);
    deps.setup.fetch = async (url) =>
      new Response(String(url).endsWith("/models") ? JSON.stringify({ data: [{ id: "gpt-4o" }, { id: "gpt-4.1" }] }) : JSON.stringify({ choices: [] }));
    vi.mocked(deps.setup.save).mockImplementation(async () => {
      configured = true;
    });
    const opened = await openChat(browser.context!, pages.origin, deps);
    open.push(opened);
    const page = opened.page;
    await page.locator("#setup h2", { hasText: "Choose where chat goes" }).waitFor();
    expect(await page.locator("#log").isHidden()).toBe(true);
    expect(await page.locator("#composer").isHidden()).toBe(true);
    await page.locator("#setup-url").fill("https://api.example.com/v1");
    await page.locator("#setup-list").click();
    await page.locator("#setup-model option", { hasText: "gpt-4.1" }).waitFor({ state: "attached" });
    await page.locator("#setup-model").selectOption("gpt-4.1");
    await page.locator("#setup-use").click();
    await page.locator("#composer").waitFor({ state: "visible" });
    expect(vi.mocked(deps.setup.save).mock.calls).toEqual([[{ baseUrl: "https://api.example.com/v1", model: "gpt-4.1", keyed: true }]]);
    expect(await page.locator("#provider").textContent()).toBe("gpt-4o · 127.0.0.1:8080");
    expect(server.calls.some((c) => c.method === Requests.chatSend)).toBe(false);
  });

  // covers P7 (issue 43, item 5): a person's words never vanish behind the set-up
  it("gives a message typed while the server starts back to the text box when no model is chosen yet", async () => {
    let started!: () => void;
    const starting = new Promise<void>((resolve) => (started = resolve));
    let configured = false;
    const server = new FakeServer()
      .on(Requests.providerInfo, async () => {
        await starting;
        return configured ? CONFIGURED : { ...CONFIGURED, configured: false, baseUrl: null };
      })
      .on(Requests.sessionList, () => ({ sessions: [] }));
    const deps = chatDeps(server, APP);
    deps.setup.fetch = async (url) =>
      new Response(String(url).endsWith("/models") ? JSON.stringify({ data: [{ id: "gpt-4o" }] }) : JSON.stringify({ choices: [] }));
    vi.mocked(deps.setup.save).mockImplementation(async () => {
      configured = true;
    });
    const opened = await openChat(browser.context!, pages.origin, deps);
    open.push(opened);
    const page = opened.page;
    await ask(page, "How do I build?");
    await page.locator("#log article.turn").waitFor(); // "Thinking…" while the server starts
    started();
    await page.locator("#setup .kept", { hasText: "Your message waits in the text box" }).waitFor();
    expect(await page.locator("#input").inputValue()).toBe("How do I build?");
    await page.locator("#setup-url").fill("https://api.example.com/v1");
    await page.locator("#setup-list").click();
    await page.locator("#setup-use:not([disabled])").click();
    await page.locator("#composer").waitFor({ state: "visible" });
    expect(await page.locator("#input").inputValue()).toBe("How do I build?");
    expect(await page.locator("#log article.turn").count()).toBe(0);
    expect(server.calls.filter((c) => c.method === Requests.chatSend || c.method === Requests.sessionNew)).toEqual([]);
  });

  // covers P7 (issue 43, item 5): the keyboard reaches every control and is never stuck
  it("takes Tab from the text box to Send and on round the page's controls, and Shift+Tab back", async () => {
    const h = await chatPage();
    await h.page.locator("#rename:not([disabled])").waitFor();
    await h.page.locator("#input").focus();
    const focused = () => h.page.evaluate(() => (globalThis as unknown as { document: { activeElement: { id: string } | null } }).document.activeElement?.id ?? "");
    const visited: string[] = [];
    for (let i = 0; i < 8; i++) {
      await h.page.keyboard.press("Tab");
      visited.push(await focused());
    }
    expect(visited).toEqual(["send", "session", "provider", "rename", "delete", "new", "input", "send"]);
    await h.page.keyboard.press("Shift+Tab");
    await h.page.keyboard.press("Shift+Tab");
    expect(await focused()).toBe("new");
    await h.page.locator("#session").focus();
    await h.page.keyboard.press("Shift+Tab");
    expect(await focused()).toBe("send");
  });

  // covers P7 (issue 43, item 5): a short view (every pane of the side bar open) shows what to fill first
  it("shows the set-up's first field within the first screen of a short view", async () => {
    for (const found of [false, true]) {
      const server = new FakeServer()
        .on(Requests.providerInfo, () => ({ ...CONFIGURED, configured: false, baseUrl: null }))
        .on(Requests.sessionList, () => ({ sessions: [] }));
      const deps = chatDeps(server, APP);
      deps.setup.fetch = async (url) => {
        if (found && String(url).startsWith("http://127.0.0.1:11434/")) {
          return new Response(JSON.stringify({ data: [{ id: "llama3" }] }));
        }
        throw new TypeError("fetch failed");
      };
      const opened = await openChat(browser.context!, pages.origin, deps);
      open.push(opened);
      const page = opened.page;
      await page.setViewportSize({ width: 300, height: 280 });
      await page.locator("#setup-probe:not([disabled])").waitFor();
      const first = page.locator("#setup").locator("button.choice, #setup-url").first();
      expect(await first.evaluate((node: { id: string; className: string }) => node.id || node.className)).toBe(found ? "choice" : "setup-url");
      const box = await first.boundingBox();
      expect(box!.y + box!.height).toBeLessThanOrEqual(280);
    }
  });

  it("shows a failed send as an error in place and stays usable", async () => {
    const h = await chatPage();
    await ask(h.page, "hello");
    (await h.nextSend()).reject(Object.assign(new Error("provider: the API key was refused (401)"), { data: { code: "provider_error" } }));
    await h.page.locator("#log article.turn.failed").waitFor();
    expect(await lastTurn(h.page).locator("[role=alert]").textContent()).toBe("provider: the API key was refused (401)");
    expect(await h.page.locator("#send").isVisible()).toBe(true);
  });

  it("puts a message a set-up problem kept from being sent back in the text box", async () => {
    // covers I3, P7 (issue 42): a missing key is answered before anything is sent or recorded
    const h = await chatPage();
    await ask(h.page, "Summarise MEMORY.md");
    const refusal = Object.assign(new Error("no API key is set, so nothing was sent"), { data: { code: "provider_key_missing" } });
    (await h.nextSend()).reject(refusal);
    await h.page.locator("#log article.turn.failed").waitFor();
    await expect.poll(() => h.page.locator("#input").inputValue()).toBe("Summarise MEMORY.md");
  });
});
