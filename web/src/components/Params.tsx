// Params.tsx: a tool's input schema as a readable list of its parameters:
// name, type (with the enum values), required or optional, description;
// the properties of an object (or of an array's items) one level down,
// anything deeper as JSON.
import { pretty } from "../format";

/** Schema is the part of a JSON Schema the list reads. */
interface Schema {
  type?: string | string[];
  description?: string;
  enum?: unknown[];
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  default?: unknown;
}

/** typeText is a property's type in words: "string", "one of a, b", "array of string". */
function typeText(s: Schema): string {
  let t = Array.isArray(s.type) ? s.type.join(" or ") : (s.type ?? "any");
  if (t === "array" && s.items) t = "array of " + typeText(s.items);
  if (s.enum?.length) t += ": one of " + s.enum.map((v) => (v === "" ? '"" (empty)' : JSON.stringify(v))).join(", ");
  return t;
}

/** Params lists schema's properties; depth counts the levels shown above it. */
export function Params({ schema, depth = 0 }: { schema: unknown; depth?: number }) {
  const s = (schema ?? {}) as Schema;
  const props = Object.entries(s.properties ?? {});
  if (!props.length) return depth === 0 ? <p class="muted">No parameters.</p> : null;
  const required = new Set(s.required ?? []);
  return (
    <ul class="params" aria-label={depth === 0 ? "Parameters" : undefined}>
      {props.map(([name, p]) => {
        const inner = p.type === "array" && p.items?.properties ? p.items : p;
        return (
          <li key={name}>
            <span class="param-name">{name}</span> <span class="muted">({typeText(p)})</span>{" "}
            {required.has(name) ? <span class="req">required</span> : <span class="muted">optional</span>}
            {p.description && <div>{p.description}</div>}
            {p.default !== undefined && <div class="muted small">Default: {JSON.stringify(p.default)}</div>}
            {inner.properties &&
              (depth < 1 ? (
                <Params schema={inner} depth={depth + 1} />
              ) : (
                <pre tabIndex={0} aria-label={name + " schema"}>
                  {pretty(inner)}
                </pre>
              ))}
          </li>
        );
      })}
    </ul>
  );
}
