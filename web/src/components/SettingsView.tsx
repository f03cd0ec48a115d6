// SettingsView.tsx: the user's quota (a bar), preferences and model keys
// (BYOK): add, and delete after a confirmation; every error shows the
// server's message.
import { useEffect, useState } from "preact/hooks";
import { errorText, type Credential, type Page, type Quota } from "../api";
import { useServices } from "../context";
import { Preferences } from "./Preferences";

/** SettingsView is the Settings section. */
export function SettingsView({ onSignOut }: { onSignOut: () => void }) {
  const { session } = useServices();
  const [quota, setQuota] = useState<Quota | null>(null);
  const [quotaError, setQuotaError] = useState("");
  const [creds, setCreds] = useState<Credential[]>([]);
  const [cursor, setCursor] = useState("");
  const [hasMore, setHasMore] = useState(false);
  const [credError, setCredError] = useState("");
  const [confirm, setConfirm] = useState<string | null>(null);
  const [formError, setFormError] = useState("");
  const [busy, setBusy] = useState(false);
  const [form, setForm] = useState({ provider: "openai", label: "", apiKey: "", baseUrl: "" });

  const loadQuota = () =>
    session
      .call<Quota>("tn_user_quota")
      .then((q) => {
        setQuota(q);
        setQuotaError("");
      })
      .catch((err: unknown) => setQuotaError(errorText(err)));
  const loadCreds = (more: boolean) =>
    session
      .call<Page<Credential>>("tn_user_byok_list", more && cursor ? { cursor } : {})
      .then((p) => {
        setCreds((old) => (more ? [...old, ...(p.items ?? [])] : (p.items ?? [])));
        setCursor(p.nextCursor ?? "");
        setHasMore(p.hasMore);
        setCredError("");
      })
      .catch((err: unknown) => setCredError(errorText(err)));
  useEffect(() => {
    void loadQuota();
    void loadCreds(false);
  }, []);
  // The confirmation takes focus (on Cancel, the safe answer).
  useEffect(() => {
    if (confirm) document.querySelector<HTMLElement>(".confirm .cancel")?.focus();
  }, [confirm]);

  const remove = (c: Credential) => {
    setBusy(true);
    session
      .call("tn_user_byok_delete", { id: c.id })
      .then(() => {
        setConfirm(null);
        return loadCreds(false);
      })
      .catch((err: unknown) => setCredError(errorText(err)))
      .finally(() => setBusy(false));
  };

  const add = (e: Event) => {
    e.preventDefault();
    const args: Record<string, string> = { provider: form.provider, label: form.label };
    if (form.apiKey) args.apiKey = form.apiKey;
    if (form.baseUrl) args.baseUrl = form.baseUrl;
    setBusy(true);
    session
      .call("tn_user_byok_add", args)
      .then(() => {
        setForm({ provider: form.provider, label: "", apiKey: "", baseUrl: "" });
        setFormError("");
        return loadCreds(false);
      })
      .catch((err: unknown) => setFormError(errorText(err)))
      .finally(() => setBusy(false));
  };
  const field = (k: keyof typeof form) => (e: Event) => setForm({ ...form, [k]: (e.target as HTMLInputElement).value });

  return (
    <section class="view page" aria-labelledby="settings-h">
      <h1 id="settings-h">Settings</h1>
      <h2>Daily prompts</h2>
      {quota && (
        <div id="quota" class="quota">
          <p id="quota-label">
            {quota.current} of {quota.max} prompts used today{quota.tier ? ` (${quota.tier} tier)` : ""}
          </p>
          <progress
            class="quota-bar"
            max={Math.max(quota.max, 1)}
            value={Math.min(quota.current, Math.max(quota.max, 1))}
            aria-labelledby="quota-label"
            aria-valuemin={0}
            aria-valuemax={quota.max}
            aria-valuenow={quota.current}
          />
          <p class="muted small">
            Resets {new Date(quota.resetAt).toLocaleString()}.{quota.user && <> Signed in as {quota.user}.</>}
          </p>
        </div>
      )}
      {quotaError && (
        <p class="error" role="alert">
          {quotaError}
        </p>
      )}
      <Preferences />
      <h2>Your model keys</h2>
      <p class="muted">Your own key runs your chats; prompts on it are not counted. Keys are stored encrypted and never shown again.</p>
      {credError && (
        <p class="error" role="alert">
          {credError}
        </p>
      )}
      <ul class="cards" id="cred-list">
        {creds.map((c) => (
          <li key={c.id}>
            <strong>{c.label}</strong>{" "}
            <span class="muted">
              {c.provider} · {c.baseUrl || "default URL"} · {c.maskedKey || "no key"}
            </span>
            {confirm === c.id ? (
              <span class="confirm" role="group" aria-label={"Delete " + c.label + "?"}>
                Delete “{c.label}”? Chats then use the server's model.
                <button type="button" class="danger" disabled={busy} onClick={() => remove(c)}>
                  Delete
                </button>
                <button type="button" class="cancel" onClick={() => setConfirm(null)}>
                  Cancel
                </button>
              </span>
            ) : (
              <button type="button" class="quiet" aria-label={"Delete " + c.label} onClick={() => setConfirm(c.id)}>
                Delete…
              </button>
            )}
          </li>
        ))}
        {!creds.length && !credError && <li class="muted">No keys: your chats use the server's model.</li>}
      </ul>
      {hasMore && (
        <button type="button" onClick={() => void loadCreds(true)}>
          Load more
        </button>
      )}
      <h2>Add a model key</h2>
      <form class="stack" onSubmit={add}>
        <label for="cred-provider">Provider</label>
        <select id="cred-provider" value={form.provider} onChange={field("provider")}>
          <option>openai</option>
          <option>anthropic</option>
          <option>ollama</option>
        </select>
        <label for="cred-label">Label</label>
        <input id="cred-label" required maxLength={100} value={form.label} onInput={field("label")} />
        <label for="cred-key">API key</label>
        <input id="cred-key" type="password" autocomplete="off" value={form.apiKey} onInput={field("apiKey")} />
        <label for="cred-url">Base URL (optional)</label>
        <input id="cred-url" type="url" placeholder="https://…" value={form.baseUrl} onInput={field("baseUrl")} />
        <button type="submit" class="primary" disabled={busy}>
          Add key
        </button>
        {formError && (
          <p class="error" role="alert">
            {formError}
          </p>
        )}
      </form>
      {session.token && (
        <>
          <h2>Session</h2>
          <button type="button" onClick={onSignOut}>
            Sign out
          </button>
        </>
      )}
    </section>
  );
}
