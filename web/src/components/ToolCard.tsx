// ToolCard.tsx: one tool call of a turn: the tool actually run (for
// use_tool, the one its input names), its source, state and duration, and,
// collapsed, its input and result pretty-printed. A call waiting for
// approval shows Approve / Deny with the time left.
import { useEffect, useState } from "preact/hooks";
import { duration, pretty, toolName } from "../format";
import type { ToolCall } from "../store";

/** ToolCard shows call; onAnswer sends an approval. */
export function ToolCard({ call, onAnswer }: { call: ToolCall; onAnswer: (approved: boolean) => void }) {
  const n = toolName(call.name, call.input, call.flat);
  const state = call.state === "approval" ? "waiting for approval" : call.state;
  return (
    <div class={"tool " + call.state}>
      <details>
        <summary>
          <strong class="tool-name">{n.tool}</strong>
          {n.where && <span class="muted tool-where">{n.where}</span>}
          <span class={"badge " + call.source}>{call.source}</span>
          <span class={"state " + call.state}>{state}</span>
          {call.durationMs !== undefined && <span class="muted duration">{duration(call.durationMs)}</span>}
          {n.via && <span class="muted small">via {n.via}</span>}
        </summary>
        <div class="tool-body">
          <h2>Input</h2>
          <pre class="tool-input" tabIndex={0} aria-label="Input">{pretty(call.input) || "(none)"}</pre>
          <h2>Result</h2>
          <pre class="tool-result" tabIndex={0} aria-label="Result">{call.state === "running" || call.state === "approval" ? "(running)" : pretty(call.result) || "(empty)"}</pre>
        </div>
      </details>
      {call.state === "approval" && call.approval && <Approval deadline={call.approval.deadline} tool={n.tool} onAnswer={onAnswer} />}
      {call.approval?.answer !== undefined && call.state === "running" && (
        <p class="muted small">{call.approval.answer ? "Approved; running." : "Denied."}</p>
      )}
    </div>
  );
}

function Approval({ deadline, tool, onAnswer }: { deadline: number; tool: string; onAnswer: (ok: boolean) => void }) {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const t = window.setInterval(() => setNow(Date.now()), 1000);
    return () => window.clearInterval(t);
  }, []);
  const left = Math.max(0, Math.ceil((deadline - now) / 1000));
  return (
    <div class="approval" role="group" aria-label={"Approve " + tool + "?"}>
      <span>
        Run <strong>{tool}</strong>? {left > 0 ? `${left} s left` : "time is up"}
      </span>
      <button type="button" class="primary" disabled={left === 0} onClick={() => onAnswer(true)}>
        Approve
      </button>
      <button type="button" disabled={left === 0} onClick={() => onAnswer(false)}>
        Deny
      </button>
    </div>
  );
}
