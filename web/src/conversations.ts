// conversations.ts: the list of conversations (session_list), paged, with a
// title for each: the conversation's own (its stored title, metadata.title
// or its summary), else its first user message, read lazily with
// exchange_list; renaming (session_rename) and deleting (session_delete).
import { errorText, type Conversation, type Exchange, type Session } from "./api";
import { Observable } from "./store";
import { time, truncate } from "./format";

/** listPage is how many conversations one session_list call reads. */
export const listPage = 30;

/** List is one paged session_list query. */
export class List extends Observable {
  items: Conversation[] = [];
  hasMore = false;
  loading = false;
  loaded = false;
  error = "";
  private readonly session: Session;
  private readonly filter: (c: Conversation) => boolean;
  private readonly args: Record<string, unknown>;
  private offset = 0;

  constructor(session: Session, args: Record<string, unknown>, filter: (c: Conversation) => boolean) {
    super();
    this.session = session;
    this.args = args;
    this.filter = filter;
  }

  /** reload reads the first page again. */
  reload(): Promise<void> {
    this.offset = 0;
    return this.more(true);
  }

  /** more reads the next page. */
  async more(reset = false): Promise<void> {
    if (this.loading && !reset) return;
    this.loading = true;
    this.error = "";
    this.changed();
    try {
      const offset = reset ? 0 : this.offset;
      const page = await this.session.call<{ sessions: Conversation[] | null }>("session_list", { ...this.args, limit: listPage, offset });
      const got = page.sessions ?? [];
      const kept = got.filter(this.filter);
      this.items = reset ? kept : [...this.items, ...kept.filter((c) => !this.items.some((x) => x.id === c.id))];
      this.offset = offset + got.length;
      this.hasMore = got.length === listPage;
      this.loaded = true;
    } catch (err) {
      this.error = errorText(err);
    } finally {
      this.loading = false;
      this.changed();
    }
  }

  /** rename stores conversation id's new title; it rejects with the server's error. */
  async rename(id: string, title: string): Promise<void> {
    const res = await this.session.call<{ session: Conversation }>("session_rename", { session_id: id, title });
    this.items = this.items.map((c) => (c.id === id ? { ...c, title: res.session.title } : c));
    this.changed();
  }

  /** remove deletes conversation id with its exchanges; it rejects with the server's error. */
  async remove(id: string): Promise<void> {
    await this.session.call("session_delete", { session_id: id });
    const before = this.items.length;
    this.items = this.items.filter((c) => c.id !== id);
    if (this.items.length < before) this.offset = Math.max(0, this.offset - 1);
    this.changed();
  }
}

/** Titles finds and keeps conversations' titles. */
export class Titles extends Observable {
  private known = new Map<string, string>();
  private failed = new Set<string>();
  private wanted: string[] = [];
  private running = 0;
  private readonly session: Session;

  constructor(session: Session) {
    super();
    this.session = session;
  }

  /** set records a title known otherwise (the first message sent here). */
  set(id: string, title: string) {
    if (this.known.has(id)) return;
    this.known.set(id, truncate(title, 80));
    this.changed();
  }

  /** of returns c's title, asking for its first message if nothing else names it. */
  of(c: Conversation): string {
    if (c.title?.trim()) return c.title;
    const meta = c.metadata?.title;
    if (typeof meta === "string" && meta.trim()) return truncate(meta, 80);
    if (c.summary?.trim()) return truncate(c.summary, 80);
    const t = this.known.get(c.id);
    if (t !== undefined) return t;
    if (this.failed.has(c.id)) return "Title unavailable (" + time(c.created_at) + ")";
    if (c.exchange_count === 0) return "Untitled conversation";
    if (!this.wanted.includes(c.id)) {
      this.wanted.push(c.id);
      this.pump();
    }
    return "…";
  }

  private pump() {
    while (this.running < 4 && this.wanted.length) {
      const id = this.wanted.shift() as string;
      this.running++;
      this.session
        .call<{ exchanges: Exchange[] | null }>("exchange_list", { session_id: id, limit: 1 })
        .then((page) => {
          const first = (page.exchanges ?? []).find((x) => x.role === "user");
          this.known.set(id, first ? truncate(first.content, 80) : "Untitled conversation");
        })
        .catch(() => {
          // The title stays generic; opening the conversation shows its error.
          this.failed.add(id);
        })
        .finally(() => {
          this.running--;
          this.changed();
          this.pump();
        });
    }
  }
}
