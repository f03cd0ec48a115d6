// main.tsx: the web UI's entry point.
import { render } from "preact";
import { App } from "./components/App";
import { Session } from "./api";
import { ChatStore } from "./chat";
import { List, Titles } from "./conversations";
import type { Services } from "./context";
import { restoreTheme } from "./theme";
import "./style.css";

function storage(): Storage | null {
  try {
    return window.localStorage;
  } catch {
    return null; // storage disabled: the token lasts as long as the page
  }
}

restoreTheme(storage());
const session = new Session(storage());
const services: Services = {
  session,
  chat: new ChatStore(session),
  chats: new List(session, { platform: "chat" }, () => true),
  others: new List(session, {}, (c) => c.platform !== "chat"),
  titles: new Titles(session),
};
const root = document.getElementById("app");
if (root) render(<App services={services} />, root);
