/**
 * Model text (and server Markdown) to DOM nodes, never to live HTML.
 *
 * markdown-it with `html: false` escapes every tag in the text, so `<script>` or `<img onerror>`
 * come out as text; it also refuses `javascript:`, `vbscript:`, `file:` and `data:` links, but not
 * other schemes such as `command:`. DOMPurify then keeps only the tags markdown-it makes, with no
 * event or style attributes, and only absolute http(s) URLs; it returns a DocumentFragment, so no
 * string is ever assigned to `innerHTML`.
 */
import DOMPurify from "dompurify";
import MarkdownIt from "markdown-it";

// linkify turns bare URLs into links; any that is not http(s) loses its href below.
const markdown = new MarkdownIt({ html: false, linkify: true, typographer: false });

const ALLOWED_TAGS = [
  "a", "blockquote", "br", "code", "del", "em", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "li", "ol", "p",
  "pre", "s", "strong", "table", "tbody", "td", "th", "thead", "tr", "ul",
];

export function renderMarkdown(text: string): DocumentFragment {
  return DOMPurify.sanitize(markdown.render(text), {
    ALLOWED_TAGS,
    // `class` carries a code block's language (`language-ts`); `start` an ordered list's first number.
    ALLOWED_ATTR: ["href", "title", "class", "start"],
    ALLOWED_URI_REGEXP: /^https?:\/\//i,
    RETURN_DOM_FRAGMENT: true,
  });
}
