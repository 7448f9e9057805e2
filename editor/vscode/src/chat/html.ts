/**
 * The chat page's HTML: a fixed shell that loads the bundled page script (dist/webview.js) and
 * the stylesheet (media/chat.css). Nothing from the model or the server is ever put into it; the
 * script draws everything with DOM calls.
 *
 * The Content-Security-Policy allows nothing by default: scripts only with this page's nonce,
 * styles and fonts only from the extension (`cspSource`), images only from the extension or
 * data: URIs. A fresh nonce is made for every page.
 */
import { randomBytes } from "node:crypto";

export interface PageResources {
  /** `webview.cspSource`: the origin the webview serves the extension's files from. */
  cspSource: string;
  /** The page script's URI as the webview sees it (`webview.asWebviewUri`). */
  scriptUri: string;
  /** The stylesheet's URI as the webview sees it. */
  styleUri: string;
}

export function newNonce(): string {
  return randomBytes(18).toString("base64");
}

export function contentSecurityPolicy(cspSource: string, nonce: string): string {
  return [
    "default-src 'none'",
    `script-src 'nonce-${nonce}'`,
    `style-src ${cspSource} 'nonce-${nonce}'`,
    `img-src ${cspSource} data:`,
    `font-src ${cspSource}`,
  ].join("; ");
}

const escapeAttribute = (value: string): string =>
  value.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

export function chatHtml(resources: PageResources, nonce = newNonce()): string {
  const csp = escapeAttribute(contentSecurityPolicy(resources.cspSource, nonce));
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${escapeAttribute(resources.styleUri)}" nonce="${nonce}">
<title>lecode chat</title>
</head>
<body>
<header class="bar">
  <div class="row">
    <select id="project" aria-label="Project" hidden></select>
    <select id="session" aria-label="Session"></select>
  </div>
  <div class="row">
    <button id="provider" type="button" class="link" title="Change the chat model" hidden></button>
    <span class="spacer"></span>
    <button id="rename" type="button" class="icon" title="Rename this session" aria-label="Rename this session" disabled>Rename</button>
    <button id="delete" type="button" class="icon" title="Delete this session…" aria-label="Delete this session" disabled>Delete</button>
    <button id="new" type="button" title="New session">New</button>
  </div>
</header>
<p class="usage"><span id="usage" role="status" hidden></span></p>
<section id="setup" hidden></section>
<main id="log" role="log" aria-live="polite"></main>
<p id="notice" role="status" hidden></p>
<form id="composer">
  <ul id="completions" role="listbox" aria-label="Commands" hidden></ul>
  <textarea id="input" rows="3" placeholder="Ask about this project, or type /memory (Enter sends, Escape stops)" aria-label="Message"
    aria-autocomplete="list" aria-controls="completions"></textarea>
  <div class="actions">
    <button id="send" type="submit">Send</button>
    <button id="stop" type="button" hidden>Stop</button>
  </div>
</form>
<script nonce="${nonce}" src="${escapeAttribute(resources.scriptUri)}"></script>
</body>
</html>
`;
}
