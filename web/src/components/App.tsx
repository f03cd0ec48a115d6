// App.tsx: the page: a skip link, the header with the sections, and the
// section the route names (or the sign-in screen when the server asks).
import { useEffect, useState } from "preact/hooks";
import { errorText } from "../api";
import { ServicesContext, type Services } from "../context";
import { href, useRoute, type View } from "../router";
import { useObservable } from "../store";
import { applyTheme } from "../theme";
import { ChatView } from "./ChatView";
import { SettingsView } from "./SettingsView";
import { SignIn } from "./SignIn";
import { ToolsView } from "./ToolsView";
import { TracesView } from "./TracesView";

const sections: { view: View; label: string }[] = [
  { view: "chat", label: "Chat" },
  { view: "tools", label: "Tools" },
  { view: "traces", label: "Traces" },
  { view: "settings", label: "Settings" },
];

/** App is the whole page. */
export function App({ services }: { services: Services }) {
  const { session, chat, chats } = services;
  useObservable(session);
  useObservable(chat);
  const route = useRoute();
  const [ready, setReady] = useState(false);
  const [startError, setStartError] = useState("");

  // Start: does this server take us as we are (loopback, or a kept token)?
  useEffect(() => {
    session
      .request("/api/tools")
      .then(() => setReady(true))
      .catch((err: unknown) => {
        if (!session.signedOut) setStartError(errorText(err));
      });
  }, [session]);

  useEffect(() => {
    if (!ready || session.signedOut) return;
    chat.start();
    void chats.reload();
    // The theme preference; if it cannot be read, the remembered one stays.
    session
      .call<{ preferences?: { theme?: string } }>("tn_user_preferences_get")
      .then((r) => applyTheme(r.preferences?.theme, session.storage))
      .catch(() => undefined);
  }, [ready, session.signedOut, chat, chats, session]);

  useEffect(() => {
    chat.onAdopt = (id) => {
      const first = chat.thread(id).messages.find((m) => m.role === "user");
      if (first) services.titles.set(id, first.text);
      location.replace(href("chat", id));
    };
    chat.onFinished = () => void chats.reload();
  }, [chat, chats, services.titles]);

  const onSignedIn = () => {
    setReady(true);
    setStartError("");
    chat.resume();
    void chats.reload();
  };

  const signOut = () => {
    chat.stop();
    session.signOut();
  };

  return (
    <ServicesContext.Provider value={services}>
      <a class="skip" href="#main" onClick={skipToMain}>
        Skip to content
      </a>
      <header class="top">
        <span class="brand">Nexus</span>
        {!session.signedOut && (
          <nav aria-label="Sections" class="tabs">
            {sections.map((s) => (
              <a
                key={s.view}
                class="tab"
                href={s.view === "chat" ? href("chat", chat.current) : href(s.view)}
                aria-current={route.view === s.view ? "page" : undefined}
              >
                {s.label}
              </a>
            ))}
          </nav>
        )}
        {session.token && !session.signedOut && (
          <button type="button" class="quiet signout" onClick={signOut}>
            Sign out
          </button>
        )}
      </header>
      {chat.connection === "reconnecting" && !session.signedOut && (
        <p class="banner" role="status">
          The chat connection dropped{chat.closeReason ? ` (${chat.closeReason})` : ""}; reconnecting…
        </p>
      )}
      {chat.notice && (
        <p class="banner error" role="alert">
          {chat.notice}
        </p>
      )}
      <div class="sr" aria-live="polite" aria-atomic="true">
        {chat.announcement}
      </div>
      {session.signedOut ? (
        <SignIn revoked={session.revoked} onSignedIn={onSignedIn} />
      ) : (
        <main id="main" tabIndex={-1}>
          {startError && (
            <p class="error" role="alert">
              {startError}
            </p>
          )}
          <ChatView route={route} hidden={route.view !== "chat"} />
          {route.view === "tools" && <ToolsView />}
          {route.view === "traces" && <TracesView />}
          {route.view === "settings" && <SettingsView onSignOut={signOut} />}
        </main>
      )}
    </ServicesContext.Provider>
  );
}

function skipToMain(e: Event) {
  e.preventDefault(); // the hash routes; move focus instead
  const main = document.getElementById("main");
  const input = document.getElementById("input");
  (input && input.offsetParent !== null ? input : main)?.focus();
}
