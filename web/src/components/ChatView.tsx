// ChatView.tsx: the chat: the conversation list (a drawer on phones), the
// thread and the composer.
import { useEffect, useRef, useState } from "preact/hooks";
import type { Credential, Page } from "../api";
import { useServices } from "../context";
import { href, type Route } from "../router";
import { useObservable } from "../store";
import { Conversations } from "./Conversations";
import { Thread } from "./Thread";

/** examples are the welcome screen's questions. */
const examples = [
  "Does MATH 1171 at Langara transfer to UBC?",
  "Which Douglas College courses count as first-year English at SFU?",
  "I took CPSC 1150 at Langara: what does it transfer to at UVic?",
  "How do I check whether a BC college course transfers before I enrol?",
];

/** ChatView is the chat section; it stays mounted (hidden) while another section shows. */
export function ChatView({ route, hidden }: { route: Route; hidden: boolean }) {
  const { chat, titles, session } = useServices();
  useObservable(chat);
  const [drawer, setDrawer] = useState(false);
  const [keys, setKeys] = useState<Credential[]>([]);

  // The models the user may choose: the default, the server's, their keys.
  useEffect(() => {
    if (hidden) return;
    session
      .call<Page<Credential>>("tn_user_byok_list", {})
      .then((p) => setKeys(p.items ?? []))
      .catch(() => setKeys([]));
  }, [hidden, session]);
  const [draft, setDraft] = useState("");
  const input = useRef<HTMLTextAreaElement>(null);

  // The route names the conversation on screen.
  useEffect(() => {
    if (hidden) return;
    if (route.conversation !== chat.current || (route.conversation && !chat.thread(route.conversation).loaded)) chat.open(route.conversation);
    setDrawer(false);
  }, [route.conversation, hidden, chat]);

  const thread = chat.thread(chat.current);

  // The drawer (phones): focus moves into it when it opens, Escape closes
  // it, and focus returns to its toggle.
  const toggle = useRef<HTMLButtonElement>(null);
  const wasOpen = useRef(false);
  useEffect(() => {
    if (drawer) {
      document.getElementById("convs")?.querySelector<HTMLElement>("a, button, input")?.focus();
      const onKey = (e: KeyboardEvent) => {
        if (e.key === "Escape") setDrawer(false);
      };
      document.addEventListener("keydown", onKey);
      wasOpen.current = true;
      return () => document.removeEventListener("keydown", onKey);
    }
    if (wasOpen.current && toggle.current?.offsetParent) toggle.current.focus();
    wasOpen.current = false;
  }, [drawer]);

  // Escape stops the running turn.
  useEffect(() => {
    if (hidden || !thread.running || drawer) return;
    const onKey = (e: KeyboardEvent) => {
      if (e.key === "Escape") chat.cancel();
    };
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
  }, [hidden, thread.running, drawer, chat]);

  // editing: the composer holds the last message, to be sent in its place.
  const [editing, setEditing] = useState(false);
  useEffect(() => setEditing(false), [chat.current]);

  const send = (text: string, replaceLast = false) => {
    const t = text.trim();
    if (!t || thread.running) return;
    if (!thread.messages.length && chat.current) titles.set(chat.current, t);
    chat.send(t, replaceLast);
    setDraft("");
    setEditing(false);
  };

  const edit = (text: string) => {
    setDraft(text);
    setEditing(true);
    input.current?.focus();
  };

  const cancelEdit = () => {
    setDraft("");
    setEditing(false);
    input.current?.focus();
  };

  return (
    <section class="view chat" hidden={hidden} aria-label="Chat">
      <div class="chat-bar">
        <button type="button" ref={toggle} class="quiet drawer-toggle" aria-expanded={drawer} aria-controls="convs" onClick={() => setDrawer(!drawer)}>
          Conversations
        </button>
        <a class="button quiet" href={href("chat")}>
          New
        </a>
      </div>
      <Conversations id="convs" open={drawer} onClose={() => setDrawer(false)} current={chat.current} />
      {drawer && <div class="scrim" onClick={() => setDrawer(false)} />}
      <div class="thread">
        {/* The welcome screen has its own heading; a conversation gets one for screen readers. */}
        {thread.messages.length > 0 && <h1 class="sr">Chat</h1>}
        <Thread thread={thread} onEdit={edit} onRegenerate={(text) => send(text, true)}>
          <div class="welcome">
            <h1>Ask about BC course transfers</h1>
            <p class="muted">Nexus answers with the tools it has: course equivalencies, institutions, and what you tell it.</p>
            <ul class="examples">
              {examples.map((q) => (
                <li key={q}>
                  <button type="button" class="example" onClick={() => send(q)}>
                    {q}
                  </button>
                </li>
              ))}
            </ul>
          </div>
        </Thread>
        {editing && (
          <p class="editing" role="status">
            Editing your last message: sending replaces it and its answer.{" "}
            <button type="button" class="quiet small" onClick={cancelEdit}>
              Cancel editing
            </button>
          </p>
        )}
        <form
          class="composer"
          onSubmit={(e) => {
            e.preventDefault();
            send(draft, editing);
          }}
        >
          <label for="input" class="sr">
            Message
          </label>
          <textarea
            id="input"
            ref={input}
            rows={2}
            value={draft}
            placeholder="Ask something… (Enter sends, Shift+Enter for a new line)"
            onInput={(e) => setDraft((e.target as HTMLTextAreaElement).value)}
            onKeyDown={(e) => {
              if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
                e.preventDefault();
                send(draft, editing);
              }
            }}
          />
          {thread.running ? (
            <button type="button" id="stop" onClick={() => chat.cancel()} aria-keyshortcuts="Escape">
              Stop
            </button>
          ) : (
            <button type="submit" id="send" class="primary" disabled={!draft.trim()}>
              Send
            </button>
          )}
        </form>
        <div class="model-line">
          <label for="model">Model</label>
          <select
            id="model"
            value={chat.model}
            onChange={(e) => chat.chooseModel((e.target as HTMLSelectElement).value)}
          >
            <option value="">Default (your newest key, else the server's)</option>
            <option value="server">The server's model</option>
            {keys.map((k) => (
              <option key={k.id} value={k.id}>
                Your key: {k.label || k.provider} ({k.provider})
              </option>
            ))}
          </select>
        </div>
      </div>
    </section>
  );
}
