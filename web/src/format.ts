// format.ts: how values read on screen.

/**
 * parseDeep turns JSON text into a value, and JSON text found inside
 * (a downstream tool's content[].text) too, so that nothing shows as an
 * escaped string.
 */
export function parseDeep(v: unknown, depth = 0): unknown {
  if (depth > 4) return v;
  if (typeof v === "string") {
    const t = v.trim();
    if ((t.startsWith("{") && t.endsWith("}")) || (t.startsWith("[") && t.endsWith("]"))) {
      try {
        return parseDeep(JSON.parse(t), depth + 1);
      } catch {
        return v;
      }
    }
    return v;
  }
  if (Array.isArray(v)) return v.map((x) => parseDeep(x, depth + 1));
  if (v && typeof v === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[k] = parseDeep(x, depth + 1);
    return out;
  }
  return v;
}

/** pretty shows a value (or JSON text) indented; plain text stays as is. */
export function pretty(v: unknown): string {
  if (v === undefined || v === null || v === "") return "";
  const p = parseDeep(v);
  if (typeof p === "string") return p;
  return JSON.stringify(p, null, 2);
}

/** ToolName names the tool a call actually ran. */
export interface ToolName {
  /** tool is the tool run (for use_tool, the one it names). */
  tool: string;
  /** where is "toolbox / server", when known. */
  where: string;
  /** via is the meta-tool that ran it (use_tool), if any. */
  via: string;
}

/** toolName reads a call's name and input (JSON text or a value). */
export function toolName(name: string, input: unknown, flat?: string): ToolName {
  const args = parseDeep(input);
  if (name === "use_tool" && args && typeof args === "object") {
    const t = (args as { tool?: { toolbox?: string; server?: string; tool?: string } }).tool;
    if (t && typeof t === "object" && t.tool) {
      return { tool: t.tool, where: [t.toolbox, t.server].filter(Boolean).join(" / "), via: "use_tool" };
    }
  }
  if (flat && flat !== name) return { tool: flat, where: "", via: name };
  return { tool: name, where: "", via: "" };
}

/** time formats an instant for a message or a row. */
export function time(d: Date | string | number): string {
  const t = d instanceof Date ? d : new Date(d);
  if (Number.isNaN(t.getTime())) return "";
  const today = new Date();
  const sameDay = t.toDateString() === today.toDateString();
  return sameDay ? t.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" }) : t.toLocaleString([], { dateStyle: "medium", timeStyle: "short" });
}

/** duration formats milliseconds. */
export function duration(ms: number): string {
  if (ms < 1) return "<1 ms";
  if (ms < 1000) return Math.round(ms) + " ms";
  return (ms / 1000).toFixed(ms < 10000 ? 2 : 1) + " s";
}

/** truncate shortens s to n characters on one line. */
export function truncate(s: string, n: number): string {
  const one = s.replace(/\s+/g, " ").trim();
  return one.length > n ? one.slice(0, n - 1) + "…" : one;
}
