// TracesView.tsx: traced tool calls, newest first, paged with the server's
// cursor. The tool filter matches a substring of the tool's name over the
// pages loaded so far (client side); the page's own calls (session_list,
// exchange_list, tn_user_quota, tn_user_byok_list) are hidden unless asked
// for. A row opens the call's details.
import { useEffect, useRef, useState } from "preact/hooks";
import { errorText, type Page, type Trace } from "../api";
import { useServices } from "../context";
import { duration, time } from "../format";

/** ownCalls are the tools this page calls itself. */
const ownCalls = new Set(["session_list", "exchange_list", "tn_user_quota", "tn_user_byok_list"]);

/** TracesView is the Traces section. */
export function TracesView() {
  const { session } = useServices();
  const [rows, setRows] = useState<Trace[]>([]);
  const [cursor, setCursor] = useState("");
  const [hasMore, setHasMore] = useState(false);
  const [loading, setLoading] = useState(false);
  const [error, setError] = useState("");
  const [tool, setTool] = useState("");
  const [outcome, setOutcome] = useState("");
  const [showOwn, setShowOwn] = useState(false);
  const [open, setOpen] = useState<Trace | null>(null);
  const detailHeading = useRef<HTMLHeadingElement>(null);

  const load = (reset: boolean) => {
    const q = new URLSearchParams({ limit: "50" });
    if (outcome) q.set("outcome", outcome);
    if (!reset && cursor) q.set("cursor", cursor);
    setLoading(true);
    setError("");
    session
      .request<Page<Trace>>("/api/traces?" + q.toString())
      .then((p) => {
        const items = p.items ?? [];
        setRows((old) => (reset ? items : [...old, ...items]));
        setCursor(p.nextCursor ?? "");
        setHasMore(p.hasMore);
      })
      .catch((err: unknown) => setError(errorText(err)))
      .finally(() => setLoading(false));
  };
  useEffect(() => load(true), [outcome]);
  useEffect(() => {
    if (open) detailHeading.current?.focus();
  }, [open]);

  const needle = tool.trim().toLowerCase();
  const shown = rows.filter((r) => (showOwn || !ownCalls.has(r.name)) && (!needle || r.name.toLowerCase().includes(needle)));

  if (open) {
    return (
      <section class="view page" aria-labelledby="trace-h">
        <button type="button" class="quiet" onClick={() => setOpen(null)}>
          ← Back to traces
        </button>
        <h1 id="trace-h" tabIndex={-1} ref={detailHeading}>
          {open.name}
        </h1>
        <dl class="trace-detail">
          {detailFields(open).map(([k, v]) => (
            <div key={k}>
              <dt>{k}</dt>
              <dd>{v}</dd>
            </div>
          ))}
        </dl>
      </section>
    );
  }

  return (
    <section class="view page" aria-labelledby="traces-h">
      <h1 id="traces-h">Traces</h1>
      <div class="filters">
        <label>
          Tool name contains
          <input id="trace-tool" type="search" value={tool} onInput={(e) => setTool((e.target as HTMLInputElement).value)} />
        </label>
        <label>
          Outcome
          <select id="trace-outcome" value={outcome} onChange={(e) => setOutcome((e.target as HTMLSelectElement).value)}>
            <option value="">any</option>
            <option value="ok">ok</option>
            <option value="error">error</option>
          </select>
        </label>
        <label class="check">
          <input id="trace-own" type="checkbox" checked={showOwn} onChange={(e) => setShowOwn((e.target as HTMLInputElement).checked)} />
          Show this page's own calls
        </label>
      </div>
      <p class="muted small">
        The name filter searches the {rows.length} calls loaded so far{hasMore ? "; load more to search further back" : ""}.
      </p>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      <div class="trace-head" aria-hidden="true">
        <span>When</span>
        <span>Tool</span>
        <span>Source</span>
        <span>Outcome</span>
        <span>Time</span>
      </div>
      <ul class="trace-list" aria-label="Traced calls">
        {shown.map((r) => (
          <li key={r.requestId + r.startedAt + r.name}>
            <button type="button" class="trace-row" onClick={() => setOpen(r)}>
              <span class="t-when">{time(r.startedAt)}</span>
              <span class="t-name">{r.name}</span>
              <span class="t-source">
                <span class={"badge " + r.source}>{r.source}</span>
              </span>
              <span class={"t-outcome state " + (r.outcome === "ok" ? "done" : "error")}>
                {r.outcome}
                {r.errorCode ? " " + r.errorCode : ""}
              </span>
              <span class="t-dur">{duration(r.durationUs / 1000)}</span>
            </button>
          </li>
        ))}
      </ul>
      {!loading && !shown.length && !error && <p class="muted">No calls{rows.length ? " match" : " yet"}.</p>}
      {loading && <p class="muted">Loading…</p>}
      {hasMore && !loading && (
        <button type="button" id="trace-more" onClick={() => load(false)}>
          Load more
        </button>
      )}
    </section>
  );
}

function detailFields(r: Trace): [string, string][] {
  return [
    ["Started", new Date(r.startedAt).toLocaleString()],
    ["Duration", duration(r.durationUs / 1000)],
    ["Outcome", r.outcome + (r.errorCode ? " (" + r.errorCode + ")" : "")],
    ["Tool", [r.toolbox, r.server, r.tool].filter(Boolean).join(" / ") || r.name],
    ["Source", r.source],
    ["Surface", r.surface],
    ["Session", r.sessionId ?? "—"],
    ["Workspace", r.workspace],
    ["User", r.userId ?? "—"],
    ["Request id", r.requestId],
    ["Arguments", r.argsBytes + " bytes"],
    ["Result", r.resultBytes + " bytes"],
  ];
}
