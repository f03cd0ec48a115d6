// app.js: Nexus's web front end. It speaks the WebSocket chat (/ws) and the
// REST API (/api/...), with the user's token when this Nexus needs one (kept
// in sessionStorage, sent as a header or as the socket's first frame, never
// in a URL).
"use strict";
(function () {
  const $ = (id) => document.getElementById(id);
  const el = (tag, attrs, ...kids) => {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "class") e.className = v; else if (k === "text") e.textContent = v; else e.setAttribute(k, v);
    }
    for (const k of kids) if (k) e.append(k);
    return e;
  };
  const state = { token: sessionStorage.getItem("nexus-token") || "", conv: "", ws: null, wsReady: null, turns: {}, cards: {} };

  // --- REST -----------------------------------------------------------------
  async function api(path, body) {
    const headers = { "Accept": "application/json" };
    if (state.token) headers["Authorization"] = "Bearer " + state.token;
    const opts = { headers };
    if (body !== undefined) { opts.method = "POST"; opts.body = JSON.stringify(body); headers["Content-Type"] = "application/json"; }
    const resp = await fetch(path, opts);
    if (resp.status === 401) { showSignin(); throw new Error("sign in needed"); }
    const data = await resp.json().catch(() => ({}));
    if (!resp.ok) throw new Error((data.error && (data.error.code + ": " + data.error.message)) || resp.statusText);
    return data;
  }
  const call = (tool, args) => api("/api/tools/" + encodeURIComponent(tool) + ":call", args || {});

  // --- sign in --------------------------------------------------------------
  function showSignin() {
    $("signin").hidden = false;
    document.querySelector("main").hidden = true;
    $("token").focus();
  }
  $("signin-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    state.token = $("token").value.trim();
    sessionStorage.setItem("nexus-token", state.token);
    try {
      await api("/api/tools");
      $("signin").hidden = true;
      document.querySelector("main").hidden = false;
      if (state.ws) { state.ws.close(); state.ws = null; }
      start();
    } catch (err) { $("signin-error").textContent = "That token does not sign in."; }
  });

  // --- navigation -----------------------------------------------------------
  const views = ["chat", "tools", "traces", "settings"];
  function show(view) {
    for (const v of views) $("view-" + v).hidden = v !== view;
    document.querySelectorAll(".tab").forEach((b) => {
      if (b.dataset.view === view) b.setAttribute("aria-current", "page"); else b.removeAttribute("aria-current");
    });
    $("nav").classList.remove("open");
    $("menu").setAttribute("aria-expanded", "false");
    if (view === "tools") loadTools();
    if (view === "traces") loadTraces(true);
    if (view === "settings") loadSettings();
  }
  document.querySelectorAll(".tab").forEach((b) => b.addEventListener("click", () => show(b.dataset.view)));
  $("menu").addEventListener("click", () => {
    const open = $("nav").classList.toggle("open");
    $("menu").setAttribute("aria-expanded", String(open));
  });

  // --- chat: the socket -----------------------------------------------------
  function socket() {
    if (state.ws && state.ws.readyState <= 1) return state.wsReady;
    const ws = new WebSocket((location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/ws");
    state.ws = ws;
    state.wsReady = new Promise((resolve, reject) => {
      ws.addEventListener("open", () => {
        if (state.token) ws.send(JSON.stringify({ type: "auth", token: state.token }));
        resolve(ws);
      });
      ws.addEventListener("error", () => reject(new Error("the chat connection failed")));
    });
    ws.addEventListener("message", (m) => onEvent(JSON.parse(m.data)));
    ws.addEventListener("close", (e) => {
      for (const id of Object.keys(state.turns)) endTurn(id, "the connection closed" + (e.reason ? ": " + e.reason : ""));
    });
    return state.wsReady;
  }

  // A turn shows in an assistant bubble: text streamed as Markdown and a
  // card per tool call.
  function newTurn(conv) {
    const body = el("div", { class: "body" });
    const tools = el("div", { class: "tools" });
    const box = el("article", { class: "msg assistant", "aria-label": "Nexus" }, tools, body);
    $("messages").append(box);
    const turn = { box, body, tools, text: "", cards: {} };
    state.turns[conv || "new"] = turn;
    return turn;
  }
  function turnOf(conv) {
    return state.turns[conv] || state.turns["new"] || newTurn(conv);
  }
  function adopt(conv) {
    if (conv && state.turns["new"] && !state.turns[conv]) { state.turns[conv] = state.turns["new"]; delete state.turns["new"]; }
  }
  function onEvent(e) {
    adopt(e.conversation_id);
    const turn = turnOf(e.conversation_id);
    switch (e.type) {
      case "token":
        turn.text += e.content;
        turn.body.innerHTML = window.renderMarkdown(turn.text);
        break;
      case "tool_start":
        turn.cards[e.tool_call_id] = toolCard(turn.tools, e.tool_name, e.source, e.tool_input);
        break;
      case "tool_complete": {
        const c = turn.cards[e.tool_call_id] || toolCard(turn.tools, e.tool_name, e.source, "");
        c.finish(e.tool_result, e.is_error, e.source);
        break;
      }
      case "complete":
        if (!state.conv || state.conv !== e.conversation_id) { state.conv = e.conversation_id; loadConversations(); }
        endTurn(e.conversation_id);
        break;
      case "error":
        turn.box.classList.add("error");
        turn.body.append(el("p", { class: "error", role: "alert", text: e.message + (e.code ? " (" + e.code + ")" : "") }));
        endTurn(e.conversation_id || "new");
        break;
    }
    const m = $("messages");
    m.scrollTop = m.scrollHeight;
  }
  function endTurn(conv, why) {
    const turn = state.turns[conv];
    if (!turn) return;
    if (why) turn.body.append(el("p", { class: "error", text: why }));
    delete state.turns[conv];
    if (!Object.keys(state.turns).length) { $("send").disabled = false; $("cancel").hidden = true; }
  }
  function pretty(s) {
    if (s === null || s === undefined) return "";
    if (typeof s !== "string") return JSON.stringify(s, null, 2);
    try { return JSON.stringify(JSON.parse(s), null, 2); } catch (_) { return s; }
  }
  function toolCard(parent, name, source, input) {
    const stateEl = el("span", { class: "state running", text: "running" });
    const badge = el("span", { class: "badge " + (source || "local"), text: source || "local" });
    const inPre = el("pre", { "aria-label": "input" }); inPre.textContent = pretty(input);
    const outPre = el("pre", { "aria-label": "result" });
    const details = el("details", { class: "tool" }, el("summary", {}, el("strong", { text: name }), badge, stateEl),
      el("div", { class: "muted", text: "Input" }), inPre, el("div", { class: "muted", text: "Result" }), outPre);
    parent.append(details);
    const card = {
      finish(res, isErr, src) {
        outPre.textContent = pretty(res);
        stateEl.textContent = isErr ? "error" : "done";
        stateEl.className = "state " + (isErr ? "error" : "done");
        if (src) { badge.textContent = src; badge.className = "badge " + src; }
      },
    };
    return card;
  }
  function userBubble(text) {
    $("messages").append(el("article", { class: "msg user", "aria-label": "You" }, el("div", { class: "body", text })));
  }

  async function send(text) {
    userBubble(text);
    newTurn(state.conv);
    $("send").disabled = true;
    $("cancel").hidden = false;
    try {
      const ws = await socket();
      ws.send(JSON.stringify({ type: "message", conversation_id: state.conv, content: text }));
    } catch (err) {
      onEvent({ type: "error", conversation_id: state.conv, message: err.message });
    }
  }
  $("composer").addEventListener("submit", (e) => {
    e.preventDefault();
    const text = $("input").value.trim();
    if (!text) return;
    $("input").value = "";
    send(text);
  });
  $("input").addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey) { e.preventDefault(); $("composer").requestSubmit(); }
  });
  $("cancel").addEventListener("click", () => {
    if (state.ws) state.ws.send(JSON.stringify({ type: "cancel", conversation_id: state.conv }));
  });
  $("new-conv").addEventListener("click", () => {
    state.conv = "";
    $("messages").replaceChildren();
    markCurrent();
    $("input").focus();
  });

  // --- chat: conversations --------------------------------------------------
  async function loadConversations() {
    try {
      const data = await call("session_list", { limit: 50 });
      const list = $("conv-list");
      list.replaceChildren();
      for (const s of data.sessions || []) {
        const when = new Date(s.created_at).toLocaleString();
        const b = el("button", { "data-id": s.id, title: s.id, text: (s.summary || s.platform + " · " + when) });
        b.addEventListener("click", () => openConversation(s.id));
        list.append(el("li", {}, b));
      }
      markCurrent();
    } catch (err) { /* shown on the next action */ }
  }
  function markCurrent() {
    document.querySelectorAll("#conv-list button").forEach((b) => b.setAttribute("aria-current", String(b.dataset.id === state.conv)));
  }
  async function openConversation(id) {
    state.conv = id;
    markCurrent();
    const box = $("messages");
    box.replaceChildren();
    const data = await call("exchange_list", { session_id: id, limit: 200 });
    for (const x of data.exchanges || []) {
      if (x.role === "user") { userBubble(x.content); continue; }
      const turn = newTurn("replay");
      delete state.turns["replay"];
      for (const u of x.tool_uses || []) toolCard(turn.tools, u.name, u.source, u.input).finish(u.result, u.is_error, u.source);
      turn.body.innerHTML = window.renderMarkdown(x.content);
    }
    box.scrollTop = box.scrollHeight;
  }

  // --- tools ----------------------------------------------------------------
  let tools = null;
  async function loadTools() {
    if (!tools) tools = (await api("/api/tools")).tools || [];
    renderTools();
  }
  function renderTools() {
    const q = $("tool-filter").value.toLowerCase();
    const list = $("tool-list");
    list.replaceChildren();
    const shown = tools.filter((t) => !q || t.name.toLowerCase().includes(q) || (t.description || "").toLowerCase().includes(q));
    $("tool-count").textContent = shown.length + " of " + tools.length + " tools";
    for (const t of shown) {
      const pre = el("pre"); pre.textContent = JSON.stringify(t.inputSchema, null, 2);
      list.append(el("li", {}, el("details", {}, el("summary", {}, el("strong", { text: t.name }), " ", el("span", { class: "badge " + t.source, text: t.source })),
        el("p", { text: t.description }), el("p", { class: "muted", text: t.toolbox + " / " + t.server }), pre)));
    }
  }
  $("tool-filter").addEventListener("input", () => tools && renderTools());

  // --- traces ---------------------------------------------------------------
  let traceCursor = "";
  async function loadTraces(reset) {
    if (reset) { traceCursor = ""; $("trace-rows").replaceChildren(); }
    const q = new URLSearchParams({ limit: "50" });
    if ($("trace-tool").value) q.set("tool", $("trace-tool").value);
    if ($("trace-outcome").value) q.set("outcome", $("trace-outcome").value);
    if (traceCursor) q.set("cursor", traceCursor);
    const page = await api("/api/traces?" + q.toString());
    for (const r of page.items || []) {
      $("trace-rows").append(el("tr", {}, el("td", { text: new Date(r.startedAt).toLocaleString() }), el("td", { text: r.name }),
        el("td", {}, el("span", { class: "badge " + r.source, text: r.source })), el("td", { text: r.outcome + (r.errorCode ? " " + r.errorCode : "") }),
        el("td", { text: (r.durationUs / 1000).toFixed(1) + " ms" })));
    }
    traceCursor = page.nextCursor || "";
    $("trace-more").hidden = !page.hasMore;
  }
  $("trace-filter").addEventListener("submit", (e) => { e.preventDefault(); loadTraces(true); });
  $("trace-more").addEventListener("click", () => loadTraces(false));

  // --- settings -------------------------------------------------------------
  async function loadSettings() {
    try {
      const q = await call("tn_user_quota");
      $("quota").textContent = q.current + " of " + q.max + " prompts used today (" + q.tier + "); resets " + new Date(q.resetAt).toLocaleString();
      $("who").textContent = q.user;
    } catch (err) { $("quota").textContent = err.message; }
    try {
      const page = await call("tn_user_byok_list");
      const list = $("cred-list");
      list.replaceChildren();
      for (const c of page.items || []) {
        const del = el("button", { text: "Delete", "aria-label": "Delete " + c.label });
        del.addEventListener("click", async () => { await call("tn_user_byok_delete", { id: c.id }); loadSettings(); });
        list.append(el("li", {}, el("strong", { text: c.label }), " ", el("span", { class: "muted", text: c.provider + " · " + c.baseUrl + " · " + (c.maskedKey || "no key") }), " ", del));
      }
      if (!list.children.length) list.append(el("li", { class: "muted", text: "No credentials: your chats use the server's model." }));
    } catch (err) { $("cred-list").replaceChildren(el("li", { class: "error", text: err.message })); }
  }
  $("cred-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    const args = { provider: $("cred-provider").value, label: $("cred-label").value };
    if ($("cred-key").value) args.apiKey = $("cred-key").value;
    if ($("cred-url").value) args.baseUrl = $("cred-url").value;
    try {
      await call("tn_user_byok_add", args);
      $("cred-form").reset();
      $("cred-error").textContent = "";
      loadSettings();
    } catch (err) { $("cred-error").textContent = err.message; }
  });

  // --- start ----------------------------------------------------------------
  async function start() {
    try {
      await api("/api/tools");
    } catch (err) { return; }
    loadConversations();
    call("tn_user_quota").then((q) => { $("who").textContent = q.user; }).catch(() => {});
  }
  start();
})();
