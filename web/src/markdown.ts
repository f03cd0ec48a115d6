// markdown.ts: an answer's Markdown into safe, highlighted HTML. marked
// parses (GitHub-flavoured: tables, task lists), DOMPurify sanitizes, and
// highlight.js colours code blocks in the languages registered below.
import { Marked } from "marked";
import DOMPurify from "dompurify";
import hljs from "highlight.js/lib/core";
import json from "highlight.js/lib/languages/json";
import bash from "highlight.js/lib/languages/bash";
import python from "highlight.js/lib/languages/python";
import javascript from "highlight.js/lib/languages/javascript";
import typescript from "highlight.js/lib/languages/typescript";
import go from "highlight.js/lib/languages/go";
import sql from "highlight.js/lib/languages/sql";

hljs.registerLanguage("json", json);
hljs.registerLanguage("bash", bash);
hljs.registerLanguage("python", python);
hljs.registerLanguage("javascript", javascript);
hljs.registerLanguage("typescript", typescript);
hljs.registerLanguage("go", go);
hljs.registerLanguage("sql", sql);

const marked = new Marked({ gfm: true, breaks: false, async: false });

// The page's Content-Security-Policy allows no inline style and images
// only from this server: such markup would only raise CSP errors.
const purifyConfig = { FORBID_TAGS: ["style", "img", "form", "input"], FORBID_ATTR: ["style"] };

/** renderMarkdown returns sanitized HTML for src. */
export function renderMarkdown(src: string): string {
  const html = marked.parse(src) as string;
  return DOMPurify.sanitize(html, purifyConfig);
}

/** A rendered top-level block of an answer: its Markdown and its element. */
interface Block {
  raw: string;
  token: Tokens[number];
  node: HTMLElement;
}

/** What renderInto last rendered into an element. */
interface Rendered {
  src: string;
  blocks: Block[];
  links: Tokens["links"];
}

type Tokens = ReturnType<typeof marked.lexer>;

const rendered = new WeakMap<HTMLElement, Rendered>();

/**
 * openBlocks is how many of the last blocks of a streaming answer are lexed
 * again as text arrives: the last block grows, and the one before may still
 * change with it (a paragraph that becomes a heading, a list that goes on
 * after a blank line).
 */
const openBlocks = 3;

/**
 * lex splits src into its top-level blocks. While streaming (src extends
 * what was rendered before), only the text from the start of the last
 * openBlocks blocks is lexed again: lexing the whole answer at every frame
 * grew with its length, and a long answer's frames took longer than 50 ms.
 * A final render (streaming over) lexes the whole text, so that what stays
 * on screen is exactly marked's rendering of the answer.
 */
function lex(prev: Rendered | undefined, src: string, final: boolean): Tokens {
  if (!final && prev && prev.blocks.length > openBlocks && src.startsWith(prev.src) && !src.includes("\r")) {
    const stable = prev.blocks.slice(0, prev.blocks.length - openBlocks);
    const offset = stable.reduce((n, b) => n + b.raw.length, 0);
    if (stable.map((b) => b.raw).join("") === src.slice(0, offset)) {
      const tail = marked.lexer(src.slice(offset));
      const tokens = Object.assign(
        stable.map((b) => b.token).concat(tail),
        { links: Object.assign({}, prev.links, tail.links) },
      ) as Tokens;
      return tokens;
    }
  }
  return marked.lexer(src);
}

/**
 * renderInto renders src into el: sanitized HTML, links opening in a new
 * tab, code blocks highlighted and wrapped with a copy button (the button's
 * click is handled by the message list, see copyCodeFrom).
 *
 * An answer streams in: src grows, and renderInto runs again at most once a
 * frame. The text is split into its top-level blocks (marked's lexer; while
 * streaming, only its open end: see lex), and only the blocks whose
 * Markdown changed since the last render (while streaming, the last one or
 * two) are parsed, sanitized and highlighted again; the others keep their
 * elements. Rendering everything at every frame made a long answer hold the
 * main thread for hundreds of milliseconds at a time (docs/benchmarks.md,
 * "Web UI"). final (the answer is complete) lexes the whole text again.
 */
export function renderInto(el: HTMLElement, src: string, final = true) {
  const prev = rendered.get(el);
  const tokens = lex(prev, src, final);
  let old = prev?.blocks;
  if (!old) {
    el.textContent = "";
    old = [];
  }
  const next: Block[] = [];
  let before: Node | null = el.firstChild;
  tokens.forEach((token, i) => {
    const prev = old[i];
    if (prev && prev.raw === token.raw && prev.node === before) {
      next.push(prev);
      before = prev.node.nextSibling;
      return;
    }
    const node = document.createElement("div");
    node.className = "md-block";
    const one = Object.assign([token], { links: tokens.links });
    node.innerHTML = DOMPurify.sanitize(marked.parser(one) as string, purifyConfig);
    decorate(node);
    if (prev && prev.node === before) {
      before = prev.node.nextSibling;
      prev.node.replaceWith(node);
    } else {
      el.insertBefore(node, before);
    }
    next.push({ raw: token.raw, token, node });
  });
  for (const b of old.slice(tokens.length)) b.node.remove();
  rendered.set(el, { src, blocks: next, links: tokens.links });
}

/** decorate finishes rendered HTML: links, highlighted code, table wraps. */
function decorate(el: HTMLElement) {
  for (const a of el.querySelectorAll("a[href]")) {
    a.setAttribute("target", "_blank");
    a.setAttribute("rel", "noopener noreferrer");
  }
  for (const code of el.querySelectorAll<HTMLElement>("pre > code")) {
    const lang = /language-(\S+)/.exec(code.className)?.[1];
    if (lang && hljs.getLanguage(lang)) {
      code.innerHTML = hljs.highlight(code.textContent ?? "", { language: lang, ignoreIllegals: true }).value;
      code.classList.add("hljs");
    } else {
      code.classList.add("hljs", "plain");
    }
    const pre = code.parentElement as HTMLElement;
    const wrap = document.createElement("div");
    wrap.className = "code-block";
    pre.replaceWith(wrap);
    const bar = document.createElement("div");
    bar.className = "code-bar";
    const label = document.createElement("span");
    label.textContent = lang ?? "text";
    const btn = document.createElement("button");
    btn.type = "button";
    btn.className = "copy-code";
    btn.textContent = "Copy code";
    bar.append(label, btn);
    // Focusable, so a keyboard can scroll a long line into view (axe
    // scrollable-region-focusable).
    pre.tabIndex = 0;
    wrap.append(bar, pre);
  }
  for (const table of el.querySelectorAll("table")) {
    const wrap = document.createElement("div");
    wrap.className = "table-wrap";
    wrap.tabIndex = 0; // scrolls sideways on a phone: reachable by keyboard
    table.replaceWith(wrap);
    wrap.append(table);
  }
}

/** copyCodeFrom returns the code a copy-code button stands for. */
export function copyCodeFrom(btn: Element): string | null {
  const code = btn.closest(".code-block")?.querySelector("pre > code");
  return code ? (code.textContent ?? "") : null;
}
