// ToolsView.tsx: the tool browser: every tool of /api/tools, searchable by
// name and description, its parameters as a list (the raw schema behind
// a disclosure).
import { useEffect, useState } from "preact/hooks";
import { errorText, type Tool } from "../api";
import { useServices } from "../context";
import { Params } from "./Params";

/** ToolsView is the Tools section. */
export function ToolsView() {
  const { session } = useServices();
  const [tools, setTools] = useState<Tool[] | null>(null);
  const [error, setError] = useState("");
  const [q, setQ] = useState("");
  useEffect(() => {
    session
      .request<{ tools: Tool[] | null }>("/api/tools")
      .then((d) => setTools(d.tools ?? []))
      .catch((err: unknown) => setError(errorText(err)));
  }, [session]);
  const needle = q.toLowerCase();
  const shown = (tools ?? []).filter((t) => !needle || t.name.toLowerCase().includes(needle) || (t.description ?? "").toLowerCase().includes(needle));
  return (
    <section class="view page" aria-labelledby="tools-h">
      <h1 id="tools-h">Tools</h1>
      <label for="tool-filter">Search tools</label>
      <input id="tool-filter" type="search" placeholder="name or description" value={q} onInput={(e) => setQ((e.target as HTMLInputElement).value)} />
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {tools === null && !error && <p class="muted">Loading…</p>}
      {tools && (
        <p class="muted" role="status">
          {shown.length} of {tools.length} tools
        </p>
      )}
      <ul class="cards" id="tool-list">
        {shown.map((t) => (
          <li key={t.name}>
            <details>
              <summary>
                <strong>{t.name}</strong> <span class={"badge " + t.source}>{t.source}</span>
              </summary>
              <p>{t.description}</p>
              <p class="muted">
                {t.toolbox} / {t.server} / {t.tool}
              </p>
              <h2 class="params-h">Parameters</h2>
              <Params schema={t.inputSchema} />
              <details class="raw-schema">
                <summary>Raw schema</summary>
                <pre tabIndex={0} aria-label="Input schema">{JSON.stringify(t.inputSchema, null, 2)}</pre>
              </details>
            </details>
          </li>
        ))}
      </ul>
    </section>
  );
}
