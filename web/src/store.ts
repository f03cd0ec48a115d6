// store.ts: the chat's state (threads, their messages and tool calls), fed
// by the socket's frames and by the REST API, with views re-rendering at
// most once per animation frame.
import { useEffect, useState } from "preact/hooks";

/** Observable is state that views subscribe to; changes are batched per animation frame. */
export class Observable {
  private listeners = new Set<() => void>();
  private frame = 0;

  subscribe(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** changed schedules one notification for the next animation frame. */
  protected changed() {
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      for (const fn of this.listeners) fn();
    });
  }
}

/** useObservable re-renders the calling component when o changes. */
export function useObservable(o: { subscribe(fn: () => void): () => void }) {
  const [, setTick] = useState(0);
  useEffect(() => o.subscribe(() => setTick((n) => n + 1)), [o]);
}

/** ToolState is where a tool call is. */
export type ToolState = "running" | "approval" | "done" | "error";

/** ToolCall is one tool card. */
export interface ToolCall {
  id: string;
  name: string;
  /** flat is the tool run, when the store says (stored turns). */
  flat?: string;
  input: unknown;
  source: string;
  state: ToolState;
  result?: unknown;
  startedAt?: number;
  durationMs?: number;
  /** approval: the server waits for Approve or Deny until deadline. */
  approval?: { deadline: number; answer?: boolean };
}

/** ChatError is an error frame shown in a message. */
export interface ChatError {
  message: string;
  code: string;
}

/** Message is one bubble. */
export interface Message {
  key: string;
  role: "user" | "assistant";
  text: string;
  at: number;
  tools: ToolCall[];
  streaming: boolean;
  error?: ChatError;
  notice?: string;
  /** the model that answered (live turns; stored ones do not keep it) */
  model?: string;
}

/** Thread is a conversation's messages as this page knows them. */
export interface Thread {
  /** id is the conversation's id; "" while a new one waits for its first frame. */
  id: string;
  messages: Message[];
  running: boolean;
  loaded: boolean;
  loading: boolean;
  loadError?: string;
  /**
   * unstarted is the message sent whose turn has not reported anything
   * yet: sent again if the connection drops first (sent says whether it
   * left, or waits in the socket's queue).
   */
  unstarted?: { content: string; sent: boolean; model: string; replaceLast: boolean };
}

/** newThread is an empty thread. */
export function newThread(id: string): Thread {
  return { id, messages: [], running: false, loaded: id === "", loading: false };
}
