// Thread.tsx: a conversation's messages. Assistant answers render as
// Markdown (at most once per animation frame while they stream: the store
// batches its changes per frame); the list itself is not a live region, the
// page announces each finished answer once.
import type { ComponentChildren } from "preact";
import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import { errorText } from "../api";
import { useServices } from "../context";
import { time } from "../format";
import { copyCodeFrom, renderInto } from "../markdown";
import { href } from "../router";
import type { Message, Thread as ThreadState } from "../store";
import { ToolCard } from "./ToolCard";

interface Props {
  thread: ThreadState;
  onEdit: (text: string) => void;
  onRegenerate: (text: string) => void;
  /** children: the welcome screen, for a thread with no messages. */
  children: ComponentChildren;
}

/** Thread is the message list. */
export function Thread({ thread, onEdit, onRegenerate, children }: Props) {
  const { chat } = useServices();
  const box = useRef<HTMLDivElement>(null);
  const [copyError, setCopyError] = useState("");
  const msgs = thread.messages;
  const last = msgs[msgs.length - 1];

  // Follow the answer while it grows, unless the reader scrolled up.
  const stick = useRef(true);
  useLayoutEffect(() => {
    const el = box.current;
    if (el && stick.current) el.scrollTop = el.scrollHeight;
  });
  useEffect(() => {
    stick.current = true;
  }, [thread.id]);

  const onScroll = () => {
    const el = box.current;
    if (el) stick.current = el.scrollHeight - el.scrollTop - el.clientHeight < 40;
  };

  // Copy buttons inside rendered Markdown are plain DOM: one listener here.
  const onClick = (e: MouseEvent) => {
    const btn = (e.target as Element).closest(".copy-code");
    if (!btn) return;
    const code = copyCodeFrom(btn);
    if (code === null) return;
    copy(code)
      .then(() => {
        btn.textContent = "Copied";
        setCopyError("");
      })
      .catch((err: unknown) => setCopyError("Copy failed: " + errorText(err)));
  };

  let lastUser = -1;
  let lastAssistant = -1;
  msgs.forEach((m, i) => {
    if (m.role === "user") lastUser = i;
    else lastAssistant = i;
  });

  return (
    <div class="messages" ref={box} onScroll={onScroll} onClick={onClick}>
      {thread.loading && !msgs.length && <p class="muted center">Loading the conversation…</p>}
      {thread.loadError && (
        <p class="error center" role="alert">
          This conversation could not be read: {thread.loadError}{" "}
          <button type="button" class="quiet small" onClick={() => void chat.load(thread)}>
            Try again
          </button>
        </p>
      )}
      {!msgs.length && !thread.loading && !thread.loadError && children}
      {copyError && (
        <p class="error center" role="alert">
          {copyError}
        </p>
      )}
      {msgs.map((m, i) => (
        <MessageView
          key={m.key}
          conv={thread.id}
          m={m}
          onCopyError={setCopyError}
          onEdit={i === lastUser && !thread.running ? () => onEdit(m.text) : undefined}
          onRegenerate={i === lastAssistant && i > lastUser && lastUser >= 0 && !thread.running ? () => onRegenerate(msgs[lastUser].text) : undefined}
        />
      ))}
      {thread.running && last?.role === "user" && (
        <p class="muted thinking" role="status">
          Thinking…
        </p>
      )}
    </div>
  );
}

interface MessageProps {
  conv: string;
  m: Message;
  onCopyError: (s: string) => void;
  onEdit?: () => void;
  onRegenerate?: () => void;
}

function MessageView({ conv, m, onCopyError, onEdit, onRegenerate }: MessageProps) {
  const { chat } = useServices();
  const [copied, setCopied] = useState(false);
  const who = m.role === "user" ? "You" : "Nexus";
  return (
    <article class={"msg " + m.role + (m.error ? " failed" : "")} aria-label={who + ", " + time(m.at)}>
      <header class="msg-head">
        <span class="who">{who}</span>
        <time dateTime={new Date(m.at).toISOString()} class="muted">
          {time(m.at)}
        </time>
        {m.streaming && <span class="muted">answering…</span>}
        {m.model && <span class="muted model-used">{m.model}</span>}
      </header>
      {m.tools.length > 0 && (
        <div class="tools">
          {m.tools.map((c) => (
            <ToolCard key={c.id} call={c} onAnswer={(ok) => chat.answer(conv, c, ok)} />
          ))}
        </div>
      )}
      {m.role === "user" ? <div class="body plain">{m.text}</div> : m.text && <Markdown text={m.text} streaming={m.streaming} />}
      {m.error && <ErrorNote message={m.error.message} code={m.error.code} />}
      {m.notice && <p class="notice">{m.notice}</p>}
      {!m.streaming && (
        <div class="msg-actions">
          <button
            type="button"
            class="quiet small"
            onClick={() =>
              copy(m.text)
                .then(() => setCopied(true))
                .catch((err: unknown) => onCopyError("Copy failed: " + errorText(err)))
            }
          >
            {copied ? "Copied" : "Copy"}
          </button>
          {onEdit && (
            <button type="button" class="quiet small" onClick={onEdit}>
              Edit and resend
            </button>
          )}
          {onRegenerate && (
            <button type="button" class="quiet small" onClick={onRegenerate}>
              Regenerate
            </button>
          )}
        </div>
      )}
    </article>
  );
}

function ErrorNote({ message, code }: { message: string; code: string }) {
  if (code === "MODEL_NOT_CONFIGURED") {
    return (
      <p class="error" role="alert">
        No language model is configured for you yet. <a href={href("settings")}>Add your model key in Settings</a>, or ask an admin to configure
        one. <span class="muted">({message})</span>
      </p>
    );
  }
  return (
    <p class="error" role="alert">
      {message}
      {code && <span class="muted"> ({code})</span>}
    </p>
  );
}

/**
 * Markdown renders text into a div it owns (Preact leaves its content
 * alone); while streaming, only the answer's open end is lexed again.
 */
function Markdown({ text, streaming }: { text: string; streaming: boolean }) {
  const ref = useRef<HTMLDivElement>(null);
  useLayoutEffect(() => {
    if (ref.current) renderInto(ref.current, text, !streaming);
  }, [text, streaming]);
  return <div class="body md" ref={ref} />;
}

function copy(text: string): Promise<void> {
  if (!navigator.clipboard) return Promise.reject(new Error("the clipboard is not available on this page (it needs HTTPS)"));
  return navigator.clipboard.writeText(text);
}
