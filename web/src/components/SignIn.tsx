// SignIn.tsx: the sign-in screen, shown instead of everything else when the
// server answers 401 (or the chat refuses the token).
import { useEffect, useRef, useState } from "preact/hooks";
import { errorText } from "../api";
import { useServices } from "../context";

/** SignIn asks for a token. */
export function SignIn({ revoked, onSignedIn }: { revoked: boolean; onSignedIn: () => void }) {
  const { session } = useServices();
  const [token, setToken] = useState("");
  const [error, setError] = useState("");
  const [busy, setBusy] = useState(false);
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => input.current?.focus(), []);

  const submit = (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError("");
    session
      .signIn(token.trim())
      .then(onSignedIn)
      .catch((err: unknown) => setError(errorText(err)))
      .finally(() => setBusy(false));
  };

  return (
    <main id="main" class="signin" tabIndex={-1}>
      <h1 id="signin-h">Sign in</h1>
      {revoked && (
        <p class="error" role="alert">
          Your token was revoked or has expired. Sign in again to continue; what you were sending is kept.
        </p>
      )}
      <p>
        This Nexus needs a token: an API token from <code>nexus users add NAME</code>, or your identity provider's access token.
      </p>
      <form onSubmit={submit} class="stack" aria-labelledby="signin-h">
        <label for="token">Token</label>
        <input
          id="token"
          ref={input}
          type="password"
          autocomplete="off"
          required
          value={token}
          onInput={(e) => setToken((e.target as HTMLInputElement).value)}
        />
        <button type="submit" class="primary" disabled={busy}>
          {busy ? "Signing in…" : "Sign in"}
        </button>
        {error && (
          <p class="error" role="alert">
            {error}
          </p>
        )}
      </form>
    </main>
  );
}
