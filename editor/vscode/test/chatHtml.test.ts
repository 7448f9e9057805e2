/**
 * The chat page's HTML shell: a strict Content-Security-Policy with a fresh nonce per page, and no
 * script that runs without that nonce.
 */
// covers P7 (chat panel: webview security)
import { describe, expect, it } from "vitest";
import { chatHtml, contentSecurityPolicy } from "../src/chat/html";

const RESOURCES = {
  cspSource: "https://file+.vscode-resource.vscode-cdn.net",
  scriptUri: "https://file+.vscode-resource.vscode-cdn.net/ext/dist/webview.js",
  styleUri: "https://file+.vscode-resource.vscode-cdn.net/ext/media/chat.css",
};

const cspOf = (html: string): string => /<meta http-equiv="Content-Security-Policy" content="([^"]*)">/.exec(html)?.[1] ?? "";

describe("chatHtml", () => {
  it("allows nothing by default, scripts only with the page's nonce, styles and fonts only from the extension", () => {
    expect(contentSecurityPolicy(RESOURCES.cspSource, "abc")).toBe(
      "default-src 'none'; script-src 'nonce-abc'; " +
        `style-src ${RESOURCES.cspSource} 'nonce-abc'; img-src ${RESOURCES.cspSource} data:; font-src ${RESOURCES.cspSource}`,
    );
    expect(cspOf(chatHtml(RESOURCES, "abc"))).toBe(contentSecurityPolicy(RESOURCES.cspSource, "abc"));
  });

  it("makes a fresh nonce for every page", () => {
    const nonces = new Set([chatHtml(RESOURCES), chatHtml(RESOURCES), chatHtml(RESOURCES)].map((html) => /'nonce-([^']+)'/.exec(cspOf(html))?.[1]));
    expect(nonces.size).toBe(3);
    expect([...nonces].every((nonce) => nonce !== undefined && nonce.length >= 24)).toBe(true);
  });

  it("has exactly one script: the bundled page, loaded with the nonce, and no inline code or handlers", () => {
    const html = chatHtml(RESOURCES, "n0nce");
    const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts.map(([, attributes, body]) => [attributes.trim(), body])).toEqual([
      [`nonce="n0nce" src="${RESOURCES.scriptUri}"`, ""],
    ]);
    expect(html).not.toMatch(/\son[a-z]+\s*=/i);
    expect(html).not.toMatch(/javascript:/i);
  });

  it("escapes the resource URIs it is given", () => {
    const html = chatHtml({ ...RESOURCES, scriptUri: 'x"><script>alert(1)</script>' }, "n");
    expect(html.match(/<script/g)).toHaveLength(1);
  });
});
