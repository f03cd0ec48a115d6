// md.js: a small, safe Markdown renderer for the chat. Everything is
// escaped first; only the constructs below become markup: fenced code,
// inline code, headings, lists, bold, italic, links (http and https only)
// and paragraphs.
"use strict";
(function () {
  function esc(s) {
    return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#39;");
  }
  function inline(s) {
    // s is escaped already; code spans are kept out of the other rules.
    const codes = [];
    s = s.replace(/`([^`]+)`/g, function (_, c) { codes.push(c); return "\u0000" + (codes.length - 1) + "\u0000"; });
    s = s.replace(/\*\*([^*]+)\*\*/g, "<strong>$1</strong>");
    s = s.replace(/(^|[^*])\*([^*\s][^*]*)\*/g, "$1<em>$2</em>");
    s = s.replace(/\[([^\]]+)\]\((https?:\/\/[^\s)]+)\)/g, '<a href="$2" rel="noopener noreferrer" target="_blank">$1</a>');
    s = s.replace(/\u0000(\d+)\u0000/g, function (_, i) { return "<code>" + codes[+i] + "</code>"; });
    return s;
  }
  function render(src) {
    const lines = esc(src || "").split("\n");
    const out = [];
    let para = [], list = null, code = null;
    function flushPara() { if (para.length) { out.push("<p>" + inline(para.join(" ")) + "</p>"); para = []; } }
    function flushList() { if (list) { out.push("<" + list.tag + ">" + list.items.map(function (i) { return "<li>" + inline(i) + "</li>"; }).join("") + "</" + list.tag + ">"); list = null; } }
    for (const line of lines) {
      if (code !== null) {
        if (/^```/.test(line)) { out.push("<pre><code>" + code.join("\n") + "</code></pre>"); code = null; } else { code.push(line); }
        continue;
      }
      if (/^```/.test(line)) { flushPara(); flushList(); code = []; continue; }
      let m;
      if ((m = /^(#{1,4})\s+(.*)$/.exec(line))) { flushPara(); flushList(); const n = m[1].length + 2; out.push("<h" + n + ">" + inline(m[2]) + "</h" + n + ">"); continue; }
      if ((m = /^\s*[-*]\s+(.*)$/.exec(line))) { flushPara(); if (!list || list.tag !== "ul") { flushList(); list = { tag: "ul", items: [] }; } list.items.push(m[1]); continue; }
      if ((m = /^\s*\d+[.)]\s+(.*)$/.exec(line))) { flushPara(); if (!list || list.tag !== "ol") { flushList(); list = { tag: "ol", items: [] }; } list.items.push(m[1]); continue; }
      if (/^\s*$/.test(line)) { flushPara(); flushList(); continue; }
      flushList();
      para.push(line);
    }
    if (code !== null) { out.push("<pre><code>" + code.join("\n") + "</code></pre>"); }
    flushPara(); flushList();
    return out.join("");
  }
  window.renderMarkdown = render;
})();
