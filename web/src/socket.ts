// socket.ts: the WebSocket chat (/ws, docs/surfaces.md "WebSocket chat").
// It sends the token as the first frame, queues frames while it is not
// connected, and reconnects with exponential backoff after a dropped
// connection. A close with 1008 (policy violation) may mean the token no
// longer authenticates: the owner is told, and decides.

/** ServerFrame is any frame the server sends. */
export interface ServerFrame {
  type: string;
  conversation_id?: string;
  content?: string;
  tool_name?: string;
  tool_input?: string;
  tool_result?: string;
  source?: string;
  timestamp?: string;
  tool_call_id?: string;
  is_error?: boolean;
  message_id?: string;
  message?: string;
  code?: string;
  retry_after?: number;
  timeout_seconds?: number;
  /** complete: the model that answered ("openai gpt-4o-mini"), and whether on the user's own key */
  model?: string;
  own_key?: boolean;
}

/** SocketEvents are what the socket tells its owner. */
export interface SocketEvents {
  frame(f: ServerFrame): void;
  /** open: connected (again); the queue was sent. */
  open(reconnected: boolean): void;
  /** closed: the connection dropped; retryIn is the wait (ms) before the next try, or -1 when it will not retry. */
  closed(code: number, reason: string, retryIn: number): void;
  /**
   * policyClose: closed with 1008; the owner checks whether the token
   * still works, and if so calls startIn(retryIn) (it was not a sign-out).
   */
  policyClose(reason: string, retryIn: number): void;
}

const minDelay = 500;
const maxDelay = 30000;

/** ChatSocket is one logical chat connection that survives drops. */
export class ChatSocket {
  private ws: WebSocket | null = null;
  private queue: string[] = [];
  private attempts = 0;
  private timer = 0;
  private stopped = true;
  private everOpen = false;
  private readonly token: () => string;
  private readonly on: SocketEvents;

  constructor(token: () => string, on: SocketEvents) {
    this.token = token;
    this.on = on;
  }

  /** connected reports whether frames go out now. */
  get connected(): boolean {
    return this.ws?.readyState === WebSocket.OPEN;
  }

  /** start connects (again), unless connected. */
  start() {
    this.stopped = false;
    window.clearTimeout(this.timer);
    if (this.ws && this.ws.readyState <= WebSocket.OPEN) return;
    this.connect();
  }

  /** startIn connects after ms (a backoff), unless stopped meanwhile. */
  startIn(ms: number) {
    window.clearTimeout(this.timer);
    this.timer = window.setTimeout(() => {
      if (!this.stopped && !this.ws) this.connect();
    }, ms);
  }

  /** stop closes the connection, drops the frames waiting, and does not reconnect (sign-out). */
  stop() {
    this.stopped = true;
    this.queue = [];
    window.clearTimeout(this.timer);
    const ws = this.ws;
    this.ws = null;
    ws?.close(1000, "signed out");
  }

  /**
   * send sends frame now and returns true, or queues it for the next
   * connection and returns false.
   */
  send(frame: object): boolean {
    const data = JSON.stringify(frame);
    if (this.connected && this.ws) {
      this.ws.send(data);
      return true;
    }
    this.queue.push(data);
    return false;
  }

  private connect() {
    const url = (location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/ws";
    const ws = new WebSocket(url);
    this.ws = ws;
    ws.addEventListener("open", () => {
      if (this.ws !== ws) return;
      const token = this.token();
      if (token) ws.send(JSON.stringify({ type: "auth", token }));
      const reconnected = this.everOpen;
      this.everOpen = true;
      this.attempts = 0;
      const q = this.queue;
      this.queue = [];
      for (const d of q) ws.send(d);
      this.on.open(reconnected);
    });
    ws.addEventListener("message", (m) => {
      if (this.ws !== ws) return;
      let f: ServerFrame;
      try {
        f = JSON.parse(String(m.data)) as ServerFrame;
      } catch {
        f = { type: "error", code: "BAD_FRAME", message: "the server sent a frame that is not JSON" };
      }
      this.on.frame(f);
    });
    ws.addEventListener("close", (e) => {
      if (this.ws !== ws) return;
      this.ws = null;
      const delay = Math.round(Math.min(maxDelay, minDelay * 2 ** this.attempts) * (0.75 + Math.random() * 0.5));
      this.attempts++;
      if (e.code === 1008) {
        this.on.closed(e.code, e.reason, -1);
        this.on.policyClose(e.reason, delay);
        return;
      }
      if (this.stopped) return;
      this.on.closed(e.code, e.reason, delay);
      this.startIn(delay);
    });
  }
}
