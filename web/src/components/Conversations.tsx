// Conversations.tsx: the conversation list: titles, a search box over the
// loaded conversations, "Load more", and the other clients' sessions under
// their own collapsed heading.
import { useState } from "preact/hooks";
import type { Conversation } from "../api";
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
      <ConvList list={chats} titles={titles} current={current} match={match} label="Your conversations" onPick={onClose} />
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
}

function ConvList({ list, titles, current, match, label, onPick }: ListProps) {
  const shown = list.items.filter(match);
  return (
    <>
      <ul class="conv-list" aria-label={label}>
        {shown.map((c) => (
          <li key={c.id}>
            <a href={href("chat", c.id)} aria-current={c.id === current ? "page" : undefined} onClick={onPick} title={c.id}>
              <span class="conv-title">{titles.of(c)}</span>
              <span class="conv-when muted">{time(c.updated_at || c.created_at)}</span>
            </a>
          </li>
        ))}
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
