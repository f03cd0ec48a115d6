// Conversations.tsx: the conversation list: titles, a search box over the
// loaded conversations, "Load more", Rename (inline) and Delete (after a
// confirmation) for the chat's own conversations, and the other clients'
// sessions under their own collapsed heading.
import { useEffect, useRef, useState } from "preact/hooks";
import { errorText, type Conversation } from "../api";
import { useServices } from "../context";
import type { List, Titles } from "../conversations";
import { time } from "../format";
import { href } from "../router";
import { useObservable } from "../store";

interface Props {
  id: string;
  open: boolean;
  current: string;
  onClose: () => void;
}

/** Conversations is the list aside the thread (a drawer on phones). */
export function Conversations({ id, open, current, onClose }: Props) {
  const { chats, others, titles } = useServices();
  useObservable(chats);
  useObservable(others);
  useObservable(titles);
  const [q, setQ] = useState("");
  const [othersOpen, setOthersOpen] = useState(false);
  const match = (c: Conversation) => !q || titles.of(c).toLowerCase().includes(q.toLowerCase());

  return (
    <aside id={id} class={"convs" + (open ? " open" : "")} aria-label="Conversations">
      <div class="convs-head">
        <a class="button primary" href={href("chat")} onClick={onClose}>
          New conversation
        </a>
        <button type="button" class="quiet close-drawer" onClick={onClose}>
          Close
        </button>
      </div>
      <label for="conv-search" class="sr">
        Search conversations
      </label>
      <input id="conv-search" type="search" placeholder="Search conversations" value={q} onInput={(e) => setQ((e.target as HTMLInputElement).value)} />
      {q && <p class="muted small">Searching the titles of the conversations loaded below.</p>}
      <ConvList list={chats} titles={titles} current={current} match={match} label="Your conversations" onPick={onClose} manage />
      <details
        class="others"
        open={othersOpen}
        onToggle={(e) => {
          const o = (e.target as HTMLDetailsElement).open;
          setOthersOpen(o);
          if (o && !others.loaded && !others.loading) void others.reload();
        }}
      >
        <summary>Other clients</summary>
        <p class="muted small">Sessions from MCP and REST clients.</p>
        {othersOpen && <ConvList list={others} titles={titles} current={current} match={match} label="Other clients' sessions" onPick={onClose} />}
      </details>
    </aside>
  );
}

interface ListProps {
  list: List;
  titles: Titles;
  current: string;
  match: (c: Conversation) => boolean;
  label: string;
  onPick: () => void;
  /** manage offers Rename and Delete on each entry. */
  manage?: boolean;
}

function ConvList({ list, titles, current, match, label, onPick, manage }: ListProps) {
  const shown = list.items.filter(match);
  return (
    <>
      <ul class="conv-list" aria-label={label}>
        {shown.map((c) =>
          manage ? (
            <ConvItem key={c.id} c={c} list={list} title={titles.of(c)} current={current} onPick={onPick} />
          ) : (
            <li key={c.id}>
              <ConvLink c={c} title={titles.of(c)} current={current} onPick={onPick} />
            </li>
          ),
        )}
      </ul>
      {list.loaded && !list.items.length && !list.error && <p class="muted small">None yet.</p>}
      {list.loaded && list.items.length > 0 && !shown.length && <p class="muted small">No title matches.</p>}
      {list.error && (
        <p class="error small" role="alert">
          {list.error}{" "}
          <button type="button" class="quiet" onClick={() => void list.reload()}>
            Retry
          </button>
        </p>
      )}
      {list.hasMore && (
        <button type="button" class="quiet more" disabled={list.loading} onClick={() => void list.more()}>
          {list.loading ? "Loading…" : "Load more"}
        </button>
      )}
    </>
  );
}

interface LinkProps {
  c: Conversation;
  title: string;
  current: string;
  onPick: () => void;
}

function ConvLink({ c, title, current, onPick, noTime }: LinkProps & { noTime?: boolean }) {
  return (
    <a href={href("chat", c.id)} aria-current={c.id === current ? "page" : undefined} onClick={onPick} title={c.id}>
      <span class="conv-title">{title}</span>
      {!noTime && <span class="conv-when muted">{time(c.updated_at || c.created_at)}</span>}
    </a>
  );
}

/**
 * ConvItem is one of the chat's conversations: its link, Rename (an inline
 * field: Enter saves, Escape cancels) and Delete (a confirmation that takes
 * focus on Cancel). Deleting the conversation on screen opens a new one.
 */
function ConvItem({ c, list, title, current, onPick }: LinkProps & { list: List }) {
  const [mode, setMode] = useState<"" | "rename" | "confirm">("");
  const [draft, setDraft] = useState("");
  const [error, setError] = useState("");
  const [busy, setBusy] = useState(false);
  const field = useRef<HTMLInputElement>(null);
  const cancelButton = useRef<HTMLButtonElement>(null);
  const renameButton = useRef<HTMLButtonElement>(null);
  const deleteButton = useRef<HTMLButtonElement>(null);
  const previous = useRef(mode);
  useEffect(() => {
    if (mode === "rename") field.current?.select();
    if (mode === "confirm") cancelButton.current?.focus();
    // Focus returns to the button that opened the field or the confirmation.
    if (mode === "" && previous.current === "rename") renameButton.current?.focus();
    if (mode === "" && previous.current === "confirm") deleteButton.current?.focus();
    previous.current = mode;
  }, [mode]);

  const close = () => {
    setMode("");
    setError("");
  };
  const save = (e: Event) => {
    e.preventDefault();
    setBusy(true);
    list
      .rename(c.id, draft)
      .then(close)
      .catch((err: unknown) => setError(errorText(err)))
      .finally(() => setBusy(false));
  };
  const remove = () => {
    setBusy(true);
    list
      .remove(c.id)
      .then(() => {
        if (c.id === current) location.hash = href("chat");
      })
      .catch((err: unknown) => {
        setError(errorText(err));
        setBusy(false);
      });
  };

  return (
    <li class="conv-item">
      {mode === "rename" ? (
        <form class="conv-rename" onSubmit={save}>
          <label for={"rename-" + c.id} class="sr">
            New title for “{title}”
          </label>
          <input
            id={"rename-" + c.id}
            ref={field}
            value={draft}
            maxLength={200}
            disabled={busy}
            onInput={(e) => setDraft((e.target as HTMLInputElement).value)}
            onKeyDown={(e) => {
              if (e.key === "Escape") {
                // Escape cancels the edit only (not the drawer, not a turn).
                e.preventDefault();
                e.stopPropagation();
                close();
              }
            }}
          />
          <span class="conv-actions">
            <button type="submit" class="small primary" disabled={busy}>
              Save
            </button>
            <button type="button" class="small quiet" onClick={close}>
              Cancel
            </button>
          </span>
        </form>
      ) : (
        <>
          <ConvLink c={c} title={title} current={current} onPick={onPick} noTime />
          <span class="conv-when muted">{time(c.updated_at || c.created_at)}</span>
          {mode === "confirm" ? (
            <span class="confirm conv-confirm" role="group" aria-label={"Delete “" + title + "”?"}>
              Delete this conversation and its messages?
              <button type="button" class="small danger" disabled={busy} onClick={remove}>
                Delete
              </button>
              <button type="button" class="small cancel" ref={cancelButton} onClick={close}>
                Cancel
              </button>
            </span>
          ) : (
            <span class="conv-actions">
              <button
                type="button"
                class="small quiet"
                ref={renameButton}
                aria-label={"Rename “" + title + "”"}
                onClick={() => {
                  setDraft(title);
                  setError("");
                  setMode("rename");
                }}
              >
                Rename
              </button>
              <button
                type="button"
                class="small quiet"
                ref={deleteButton}
                aria-label={"Delete “" + title + "”"}
                onClick={() => {
                  setError("");
                  setMode("confirm");
                }}
              >
                Delete…
              </button>
            </span>
          )}
        </>
      )}
      {error && (
        <p class="error small" role="alert">
          {error}
        </p>
      )}
    </li>
  );
}
