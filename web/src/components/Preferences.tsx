// Preferences.tsx: the user's preferences in Settings (tool approval in the
// chat and the theme), read with tn_user_preferences_get and saved with
// tn_user_preferences_set; an unset field is the server's default.
import { useEffect, useState } from "preact/hooks";
import { errorText } from "../api";
import { useServices } from "../context";
import { applyTheme } from "../theme";

/** Prefs are the fields of tn_user_preferences_get this section edits. */
interface Prefs {
  toolApproval?: string;
  theme?: string;
}

/** approvals are the toolApproval choices, "" being the server's default (its help names it). */
const approvals: { value: string; label: string; help: string }[] = [
  { value: "", label: "Server's default", help: "" },
  { value: "never", label: "Never ask", help: "Tools run without asking you." },
  { value: "always", label: "Ask before every tool", help: "The chat waits for your Approve or Deny before any tool runs." },
  { value: "writes", label: "Ask before tools that may change something", help: "Tools that only read (annotated read-only) run at once; the others wait for your Approve or Deny." },
];

/** themes are the theme choices, "" being the server's default. */
const themes: { value: string; label: string }[] = [
  { value: "", label: "Server's default" },
  { value: "system", label: "Follow the system" },
  { value: "light", label: "Light" },
  { value: "dark", label: "Dark" },
];

/** Preferences is the Preferences part of Settings. */
export function Preferences() {
  const { session } = useServices();
  const [saved, setSaved] = useState<Prefs | null>(null);
  // The server's tool approval for users who set none (tn_user_preferences_get's defaults).
  const [serverApproval, setServerApproval] = useState("");
  const [form, setForm] = useState<Prefs>({});
  const [error, setError] = useState("");
  const [status, setStatus] = useState("");
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    session
      .call<{ preferences?: Prefs; defaults?: { toolApproval?: string } }>("tn_user_preferences_get")
      .then((r) => {
        const p = r.preferences ?? {};
        setServerApproval(r.defaults?.toolApproval ?? "");
        setSaved(p);
        setForm({ toolApproval: p.toolApproval ?? "", theme: p.theme ?? "" });
        setError("");
      })
      .catch((err: unknown) => setError(errorText(err)));
  }, [session]);

  const save = (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setStatus("");
    session
      .call<{ preferences?: Prefs }>("tn_user_preferences_set", { toolApproval: form.toolApproval ?? "", theme: form.theme ?? "" })
      .then((r) => {
        setSaved(r.preferences ?? {});
        applyTheme(r.preferences?.theme, session.storage);
        setError("");
        setStatus("Saved");
      })
      .catch((err: unknown) => setError(errorText(err)))
      .finally(() => setBusy(false));
  };
  const change = (k: keyof Prefs) => (e: Event) => {
    setStatus("");
    setForm({ ...form, [k]: (e.target as HTMLInputElement).value });
  };

  return (
    <>
      <h2 id="prefs-h">Preferences</h2>
      {saved === null && !error && <p class="muted">Loading…</p>}
      {saved !== null && (
        <form class="stack" id="prefs" aria-labelledby="prefs-h" onSubmit={save}>
          <fieldset class="choices">
            <legend>Ask me before the chat runs a tool</legend>
            {approvals.map((a) => (
              <label key={a.value} class="choice">
                <input type="radio" name="toolApproval" value={a.value} checked={(form.toolApproval ?? "") === a.value} onChange={change("toolApproval")} />
                <span>
                  <strong>{a.label}</strong>
                  {(saved.toolApproval ?? "") === a.value && <span class="muted"> (current)</span>}
                  <br />
                  <span class="muted small">{a.value === "" ? defaultHelp(serverApproval) : a.help}</span>
                </span>
              </label>
            ))}
          </fieldset>
          <label for="pref-theme">Theme</label>
          <select id="pref-theme" value={form.theme ?? ""} onChange={change("theme")}>
            {themes.map((t) => (
              <option key={t.value} value={t.value}>
                {t.label}
              </option>
            ))}
          </select>
          <button type="submit" class="primary" disabled={busy}>
            Save preferences
          </button>
          <p role="status" class="ok">
            {status}
          </p>
          {error && (
            <p class="error" role="alert">
              {error}
            </p>
          )}
        </form>
      )}
      {saved === null && error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
    </>
  );
}

/** defaultHelp says what the server's default tool approval, mode, does. */
function defaultHelp(mode: string): string {
  const chosen = approvals.find((a) => a.value !== "" && a.value === mode);
  return chosen ? `This server's setting, now: ${chosen.label.toLowerCase()}.` : "This server's setting.";
}
