/**
 * Model text (and server Markdown) to DOM nodes, never to live HTML.
 *
 * markdown-it with `html: false` escapes every tag in the text, so `<script>` or `<img onerror>`
 * come out as text; it also refuses `javascript:`, `vbscript:`, `file:` and `data:` links, but not
 * other schemes such as `command:`. DOMPurify then keeps only the tags markdown-it makes, with no
 * event or style attributes, and only absolute http(s) URLs; it returns a DocumentFragment, so no
 * string is ever assigned to `innerHTML`.
 *
 * Code blocks whose fence names a language are highlighted by highlight.js (its core and the
 * languages below, bundled into the page: no CDN, no eval, so the page's CSP stays
 * `default-src 'none'`). It escapes the code and wraps tokens in `<span class="hljs-...">`, which
 * DOMPurify lets through like the rest; the colours are the theme's, in chat.css. A block without
 * a language, or one over MAX_HIGHLIGHT characters, stays plain.
 */
import DOMPurify from "dompurify";
import hljs from "highlight.js/lib/core";
import bash from "highlight.js/lib/languages/bash";
import c from "highlight.js/lib/languages/c";
import cpp from "highlight.js/lib/languages/cpp";
import csharp from "highlight.js/lib/languages/csharp";
import css from "highlight.js/lib/languages/css";
import diff from "highlight.js/lib/languages/diff";
import dockerfile from "highlight.js/lib/languages/dockerfile";
import go from "highlight.js/lib/languages/go";
import ini from "highlight.js/lib/languages/ini";
import java from "highlight.js/lib/languages/java";
import javascript from "highlight.js/lib/languages/javascript";
import json from "highlight.js/lib/languages/json";
import kotlin from "highlight.js/lib/languages/kotlin";
import makefile from "highlight.js/lib/languages/makefile";
import markdownLanguage from "highlight.js/lib/languages/markdown";
import php from "highlight.js/lib/languages/php";
import python from "highlight.js/lib/languages/python";
import ruby from "highlight.js/lib/languages/ruby";
import rust from "highlight.js/lib/languages/rust";
import shell from "highlight.js/lib/languages/shell";
import sql from "highlight.js/lib/languages/sql";
import swift from "highlight.js/lib/languages/swift";
import typescript from "highlight.js/lib/languages/typescript";
import xml from "highlight.js/lib/languages/xml";
import yaml from "highlight.js/lib/languages/yaml";
import MarkdownIt from "markdown-it";

/** Longer code blocks are shown plain (highlighting runs again at every streamed piece). */
export const MAX_HIGHLIGHT = 100_000;

const LANGUAGES = {
  bash, c, cpp, csharp, css, diff, dockerfile, go, ini, java, javascript, json, kotlin, makefile,
  markdown: markdownLanguage, php, python, ruby, rust, shell, sql, swift, typescript, xml, yaml,
};
for (const [name, language] of Object.entries(LANGUAGES)) {
  hljs.registerLanguage(name, language);
}
// `ini` reads TOML well enough (highlight.js has no TOML of its own, and says so).
hljs.registerAliases(["toml"], { languageName: "ini" });

function highlight(code: string, language: string): string {
  if (language === "" || code.length > MAX_HIGHLIGHT || hljs.getLanguage(language) === undefined) {
    return ""; // markdown-it escapes the code itself
  }
  try {
    return hljs.highlight(code, { language, ignoreIllegals: true }).value;
  } catch {
    return "";
  }
}

// linkify turns bare URLs into links; any that is not http(s) loses its href below.
const markdown = new MarkdownIt({ html: false, linkify: true, typographer: false, highlight });

const ALLOWED_TAGS = [
  "a", "blockquote", "br", "code", "del", "em", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "li", "ol", "p",
  "pre", "s", "span", "strong", "table", "tbody", "td", "th", "thead", "tr", "ul",
];

export function renderMarkdown(text: string): DocumentFragment {
  const fragment = DOMPurify.sanitize(markdown.render(text), {
    ALLOWED_TAGS,
    // `class` carries a code block's language (`language-ts`) and highlight.js's token kinds
    // (`hljs-keyword`); `start` an ordered list's first number.
    ALLOWED_ATTR: ["href", "title", "class", "start"],
    ALLOWED_URI_REGEXP: /^https?:\/\//i,
    RETURN_DOM_FRAGMENT: true,
  });
  markSecrets(fragment);
  return fragment;
}

/** What the server puts where it redacted a secret before storing it: `[secret:<kind>:<8 hex>]`. */
const SECRET_MARKER = /\[secret:([a-z0-9-]{1,40}):([0-9a-f]{8})\]/g;

/**
 * Wrap every redaction marker in the text nodes under `root` in a `span.secret` whose tooltip
 * names the kind of secret that was there. Built with DOM calls and `textContent` only: the
 * marker's text is never parsed as HTML.
 */
export function markSecrets(root: Node): void {
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  const texts: Text[] = [];
  for (let node = walker.nextNode(); node !== null; node = walker.nextNode()) {
    if ((node as Text).data.includes("[secret:")) texts.push(node as Text);
  }
  for (const text of texts) {
    const parts = document.createDocumentFragment();
    let at = 0;
    for (const match of text.data.matchAll(SECRET_MARKER)) {
      const start = match.index ?? 0;
      parts.append(text.data.slice(at, start));
      const span = document.createElement("span");
      span.className = "secret";
      span.textContent = match[0];
      span.title = `A ${match[1]} was here: lecode-ls redacted it before it was stored`;
      parts.append(span);
      at = start + match[0].length;
    }
    parts.append(text.data.slice(at));
    text.replaceWith(parts);
  }
}
