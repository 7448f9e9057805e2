/**
 * What the chat page may post to the extension host (parsePageMessage): exactly the known
 * shapes, with bounded strings; anything else is ignored before the host acts on it.
 */
// covers P7 (chat panel: the page is untrusted)
import { describe, expect, it } from "vitest";
import { MAX_TEXT, parsePageMessage, webLink } from "../src/chat/messages";

const SESSION = "20261129T100000Z-3f2a9c41";

describe("parsePageMessage", () => {
  it.each([
    [{ type: "ready" }],
    [{ type: "cancel" }],
    [{ type: "newSession" }],
    [{ type: "send", text: "How do I build?" }],
    [{ type: "send", text: "/memory search make" }],
    [{ type: "selectSession", sessionId: SESSION }],
    [{ type: "selectProject", folderUri: "file:///src/app" }],
    [{ type: "openFact", factId: 12, revision: 3 }],
    [{ type: "openNote", file: "MEMORY.md" }],
    [{ type: "openNote", file: "notes/build.md" }],
    [{ type: "openLink", href: "https://example.com/a?b=c" }],
  ])("accepts %j as it is", (message) => {
    expect(parsePageMessage(message)).toEqual(message);
  });

  it.each([
    ["not an object", "ready"],
    ["null", null],
    ["an array", [{ type: "ready" }]],
    ["an unknown type", { type: "executeCommand", command: "lecode.forgetFact" }],
    ["an extra field", { type: "cancel", sessionId: SESSION }],
    ["a send without text", { type: "send" }],
    ["a blank send", { type: "send", text: "  \n" }],
    ["a send that is too long", { type: "send", text: "x".repeat(MAX_TEXT + 1) }],
    ["a session ID that is a path", { type: "selectSession", sessionId: "../sessions/x" }],
    ["a session ID prefix", { type: "selectSession", sessionId: "20261129T100000Z" }],
    ["a fact ID as a string", { type: "openFact", factId: "12", revision: 1 }],
    ["a fact ID of 0", { type: "openFact", factId: 0, revision: 1 }],
    ["a fractional revision", { type: "openFact", factId: 1, revision: 1.5 }],
    ["a note outside the store", { type: "openNote", file: "../../.ssh/id_rsa" }],
    ["a hidden note", { type: "openNote", file: "notes/.hidden.md" }],
    ["a command: link", { type: "openLink", href: "command:lecode.forgetFact?%5B1%5D" }],
    ["a javascript: link", { type: "openLink", href: "javascript:alert(1)" }],
    ["a file: link", { type: "openLink", href: "file:///etc/passwd" }],
    ["a relative link", { type: "openLink", href: "/docs" }],
  ])("refuses %s", (_what, message) => {
    expect(parsePageMessage(message)).toBeUndefined();
  });
});

describe("webLink", () => {
  it("is the URL of an absolute http(s) link only", () => {
    expect(webLink("http://localhost:8080/x")?.host).toBe("localhost:8080");
    expect(webLink("HTTPS://EXAMPLE.COM")?.protocol).toBe("https:");
    expect(webLink("vscode://file/etc/passwd")).toBeUndefined();
    expect(webLink("not a url")).toBeUndefined();
  });
});
