// chat.ts: the chat's state machine. Frames from the socket (docs/surfaces.md
// "WebSocket chat") become messages and tool cards; stored conversations
// come from exchange_list.
import { errorText, type Exchange, type Session, type StoredToolUse } from "./api";
import { ChatSocket, type ServerFrame } from "./socket";
import { Observable, newThread, type ChatError, type Message, type Thread, type ToolCall } from "./store";

/** Connection is what the status line says about the socket. */
export type Connection = "idle" | "open" | "reconnecting";

/** exchangePage is how many stored messages one exchange_list call reads. */
const exchangePage = 100;

/** ChatStore holds every thread this page knows and runs turns over the socket. */
export class ChatStore extends Observable {
  /** threads are the stored conversations this page knows, by id. */
  readonly threads = new Map<string, Thread>();
  /** draft is the new conversation, until its first frame names its id. */
  private draft: Thread = newThread("");
  /** current is the thread on screen ("" is a new conversation). */
  current = "";
  connection: Connection = "idle";
  /** closeReason is why the last connection closed, as the server said. */
  closeReason = "";
  /** announcement is the last finished answer, for the live region; announceSeq counts them. */
  announcement = "";
  announceSeq = 0;
  /** notice is a message for the whole page (not tied to a turn). */
  notice = "";
  /**
   * model is the model the next messages ask for: "" the default (the
   * user's newest key, else the server's), "server", or a key's id.
   */
  model = "";

  private readonly session: Session;
  private readonly socket: ChatSocket;
  private keys = 0;
  private watched = new Set<string>();
  /** onAdopt is told the id a new conversation got; onFinished that a turn ended. */
  onAdopt: (id: string) => void = () => {};
  onFinished: (id: string) => void = () => {};

  constructor(session: Session) {
    super();
    this.session = session;
    this.socket = new ChatSocket(() => session.token, {
      frame: (f) => this.onFrame(f),
      open: (reconnected) => this.onOpen(reconnected),
      closed: (_code, reason, retryIn) => this.onClosed(reason, retryIn),
      policyClose: (reason, retryIn) => this.onPolicyClose(reason, retryIn),
    });
  }

  private key(): string {
    this.keys++;
    return "m" + this.keys;
  }

  /** thread returns (making it) the thread of conversation id ("" for the new one). */
  thread(id: string): Thread {
    if (!id) return this.draft;
    let t = this.threads.get(id);
    if (!t) {
      t = newThread(id);
      this.threads.set(id, t);
    }
    return t;
  }

  /** start connects the socket (after sign-in). */
  start() {
    this.socket.start();
  }

  /** stop closes the socket (sign-out); messages not started wait for resume. */
  stop() {
    this.socket.stop();
    for (const t of this.all()) if (t.unstarted) t.unstarted.sent = false;
    this.connection = "idle";
    this.changed();
  }

  /** open shows conversation id ("" for a new one), loading it if needed. */
  open(id: string) {
    this.current = id;
    const t = this.thread(id);
    if (id && !t.loaded && !t.loading) void this.load(t);
    if (id && !this.watched.has(id)) {
      this.watched.add(id);
      this.socket.send({ type: "watch", conversation_id: id });
    }
    this.changed();
  }

  /** load reads a stored conversation's messages, every page of them. */
  async load(t: Thread) {
    t.loading = true;
    t.loadError = undefined;
    this.changed();
    try {
      const all: Exchange[] = [];
      for (let offset = 0; ; offset += exchangePage) {
        const page = await this.session.call<{ exchanges: Exchange[] | null }>("exchange_list", { session_id: t.id, limit: exchangePage, offset });
        const got = page.exchanges ?? [];
        all.push(...got);
        if (got.length < exchangePage) break;
      }
      const stored = all.map((x) => this.fromExchange(x));
      // Messages of a turn running meanwhile stay after the stored ones.
      const live = t.messages.filter((m) => m.streaming || t.running);
      t.messages = live.length ? [...stored, ...live] : stored;
      t.loaded = true;
    } catch (err) {
      t.loadError = errorText(err);
    } finally {
      t.loading = false;
      this.changed();
    }
  }

  private fromExchange(x: Exchange): Message {
    const tools: ToolCall[] = (x.tool_uses ?? []).map((u: StoredToolUse) => ({
      id: u.id,
      name: u.name,
      flat: u.tool,
      input: u.input,
      source: u.source || "local",
      state: u.is_error ? "error" : "done",
      result: u.result,
      durationMs: u.duration_ms,
    }));
    return {
      key: this.key(),
      role: x.role === "user" ? "user" : "assistant",
      text: x.content ?? "",
      at: Date.parse(x.created_at) || Date.now(),
      tools,
      streaming: false,
    };
  }

  /**
   * send sends content as the user's message in the current conversation;
   * with replaceLast (Regenerate, Edit and resend) it replaces the last
   * message the user sent and what followed it, here and on the server.
   */
  send(content: string, replaceLast = false) {
    const id = this.current;
    const t = this.thread(id);
    if (replaceLast) {
      const i = t.messages.map((m) => m.role).lastIndexOf("user");
      if (i >= 0) t.messages.splice(i);
    }
    t.messages.push({ key: this.key(), role: "user", text: content, at: Date.now(), tools: [], streaming: false });
    t.running = true;
    this.notice = "";
    t.unstarted = { content, model: this.model, replaceLast, sent: false };
    t.unstarted.sent = this.sendMessage(id, t.unstarted);
    this.changed();
  }

  /** sendMessage sends the message frame of u in conversation id; false when the socket is not open. */
  private sendMessage(id: string, u: { content: string; model: string; replaceLast: boolean }): boolean {
    return this.socket.send({ type: "message", conversation_id: id, content: u.content, model: u.model, ...(u.replaceLast ? { replace_last: true } : {}) });
  }

  /** chooseModel sets the model the next messages ask for (see model). */
  chooseModel(model: string) {
    this.model = model;
    this.changed();
  }

  /** lastUser is the last message the user sent in the current thread. */
  lastUser(): Message | undefined {
    const msgs = this.thread(this.current).messages;
    for (let i = msgs.length - 1; i >= 0; i--) if (msgs[i].role === "user") return msgs[i];
    return undefined;
  }

  /** cancel stops the current thread's turn. */
  cancel() {
    const id = this.current;
    this.socket.send({ type: "cancel", conversation_id: id });
  }

  /** answer approves or denies a tool call waiting for approval. */
  answer(conv: string, call: ToolCall, approved: boolean) {
    if (!call.approval) return;
    call.approval.answer = approved;
    call.state = "running";
    this.socket.send({ type: "approval", conversation_id: conv, tool_call_id: call.id, approved });
    this.changed();
  }

  // --- frames ------------------------------------------------------------

  private onOpen(reconnected: boolean) {
    this.connection = "open";
    if (reconnected) {
      // Watches belong to a connection: ask again, and read again what a
      // dropped turn stored.
      for (const id of this.watched) this.socket.send({ type: "watch", conversation_id: id });
      const t = this.thread(this.current);
      if (t.id && t.loaded && !t.running) void this.load(t);
    }
    this.changed();
  }

  private onClosed(reason: string, retryIn: number) {
    this.connection = retryIn >= 0 ? "reconnecting" : "idle";
    this.closeReason = reason;
    for (const t of this.all()) {
      if (!t.running) continue;
      const u = t.unstarted;
      if (u) {
        // Not started: it goes again once connected; after a 1008 (retryIn
        // -1) only once signed in again (see onPolicyClose).
        if (u.sent) u.sent = retryIn >= 0 && this.sendMessage(t.id, u);
        continue;
      }
      t.running = false;
      const m = this.assistant(t);
      m.streaming = false;
      m.notice = "The connection dropped" + (reason ? " (" + reason + ")" : "") + "; what the turn stored shows when it reconnects.";
    }
    this.changed();
  }

  /** all are every thread, the new conversation's too. */
  private all(): Thread[] {
    return [this.draft, ...this.threads.values()];
  }

  private onPolicyClose(reason: string, retryIn: number) {
    // 1008: a refused token, or another policy (rate, slow reader). Ask
    // REST: a 401 there signs out; otherwise reconnect.
    this.session
      .request("/api/tools")
      .then(() => {
        if (this.session.signedOut) return;
        this.connection = "reconnecting";
        this.closeReason = reason;
        // The server refused the connection, not the token: what waited
        // is not sent again by itself.
        for (const t of this.all()) {
          if (!t.unstarted || t.unstarted.sent) continue;
          t.unstarted = undefined;
          t.running = false;
          const m = this.assistant(t);
          m.streaming = false;
          m.notice = "Not sent: the server closed the connection (" + (reason || "policy violation") + "). Send it again.";
        }
        this.socket.startIn(retryIn);
        this.changed();
      })
      .catch((err: unknown) => {
        if (this.session.signedOut) {
          this.stop(); // resume() connects again once signed in
          return;
        }
        this.notice = errorText(err);
        this.connection = "reconnecting";
        this.socket.startIn(retryIn);
        this.changed();
      });
  }

  /** resume connects again with the new token and sends what waited for it. */
  resume() {
    this.stop();
    this.socket.start();
    for (const t of this.all()) {
      const u = t.unstarted;
      if (u && !u.sent) u.sent = this.sendMessage(t.id, u);
    }
  }

  /** threadOf finds the thread a frame belongs to, adopting a new conversation's id. */
  private threadOf(f: ServerFrame): Thread | null {
    const id = f.conversation_id ?? "";
    if (!id) return null;
    const known = this.threads.get(id);
    if (known) return known;
    const draft = this.draft;
    if (draft.running) {
      // The new conversation's first frame names its id.
      draft.id = id;
      draft.loaded = true;
      this.threads.set(id, draft);
      this.draft = newThread("");
      this.watched.add(id);
      if (this.current === "") {
        this.current = id;
        this.onAdopt(id);
      }
      return draft;
    }
    // A watched conversation's turn run elsewhere.
    return this.thread(id);
  }

  /** assistant returns the thread's streaming answer, starting one if needed. */
  private assistant(t: Thread): Message {
    const last = t.messages[t.messages.length - 1];
    if (last && last.role === "assistant" && last.streaming) return last;
    const m: Message = { key: this.key(), role: "assistant", text: "", at: Date.now(), tools: [], streaming: true };
    t.messages.push(m);
    return m;
  }

  private tool(m: Message, f: ServerFrame): ToolCall {
    const id = f.tool_call_id ?? "";
    let c = id ? m.tools.find((x) => x.id === id) : undefined;
    if (!c) {
      c = { id: id || this.key(), name: f.tool_name ?? "tool", input: f.tool_input ?? "", source: f.source || "local", state: "running", startedAt: stamp(f) };
      m.tools.push(c);
    }
    return c;
  }

  private onFrame(f: ServerFrame) {
    if (f.type === "error" && f.code === "UNAUTHORIZED") {
      this.stop();
      this.session.unauthorized();
      return;
    }
    const t = this.threadOf(f);
    if (!t) {
      if (f.type === "error" && f.message !== "already authenticated") {
        this.notice = f.message + (f.code ? " (" + f.code + ")" : "");
        this.changed();
      }
      return;
    }
    t.unstarted = undefined;
    switch (f.type) {
      case "token": {
        t.running = true;
        this.assistant(t).text += f.content ?? "";
        break;
      }
      case "tool_start": {
        t.running = true;
        const c = this.tool(this.assistant(t), f);
        c.name = f.tool_name ?? c.name;
        c.input = f.tool_input ?? c.input;
        c.source = f.source || c.source;
        c.startedAt = stamp(f);
        break;
      }
      case "approval_request": {
        t.running = true;
        const c = this.tool(this.assistant(t), f);
        if (f.tool_input) c.input = f.tool_input;
        c.state = "approval";
        c.approval = { deadline: Date.now() + (f.timeout_seconds ?? 60) * 1000 };
        break;
      }
      case "tool_complete": {
        const c = this.tool(this.assistant(t), f);
        c.state = f.is_error ? "error" : "done";
        c.result = f.tool_result ?? "";
        c.source = f.source || c.source;
        if (c.startedAt !== undefined) c.durationMs = Math.max(0, stamp(f) - c.startedAt);
        break;
      }
      case "complete": {
        const m = this.assistant(t);
        m.streaming = false;
        if (f.model) m.model = f.model.replace(/^\S+ /, "") + (f.own_key ? " (your key)" : "");
        t.running = false;
        this.announce(m.text);
        this.onFinished(t.id);
        break;
      }
      case "error": {
        if (!t.running && this.watched.has(t.id) && (f.code === "BAD_REQUEST" || f.code === "NOT_FOUND")) {
          // A refused watch (a server without watching, or a conversation
          // not stored yet): the thread itself says what is stored.
          break;
        }
        const m = this.assistant(t);
        m.streaming = false;
        m.error = { message: f.message ?? "the turn failed", code: f.code ?? "" } satisfies ChatError;
        for (const c of m.tools) if (c.state === "running" || c.state === "approval") c.state = "error";
        t.running = false;
        this.announce((m.text ? m.text + "\n" : "") + "Error: " + m.error.message);
        this.onFinished(t.id);
        break;
      }
      default:
        return;
    }
    this.changed();
  }

  private announce(text: string) {
    this.announcement = text;
    this.announceSeq++;
  }
}

/** stamp is a frame's server time, or now. */
function stamp(f: ServerFrame): number {
  const t = f.timestamp ? Date.parse(f.timestamp) : NaN;
  return Number.isNaN(t) ? Date.now() : t;
}
