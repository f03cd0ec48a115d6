// router.ts: hash routes, so that a reload, back and forward stay where the
// user was: #/ (a new conversation), #/c/<id>, #/tools, #/traces,
// #/settings.
import { useEffect, useState } from "preact/hooks";

/** View is a section of the page. */
export type View = "chat" | "tools" | "traces" | "settings";

/** Route is a parsed location hash. */
export interface Route {
  view: View;
  /** conversation is the conversation on screen ("" for a new one). */
  conversation: string;
}

/** parse reads a location hash. */
export function parse(hash: string): Route {
  const path = hash.replace(/^#/, "");
  const m = /^\/c\/(.+)$/.exec(path);
  if (m) return { view: "chat", conversation: decodeURIComponent(m[1]) };
  if (path === "/tools" || path === "/traces" || path === "/settings") return { view: path.slice(1) as View, conversation: "" };
  return { view: "chat", conversation: "" };
}

/** href is the hash of a route. */
export function href(view: View, conversation = ""): string {
  if (view !== "chat") return "#/" + view;
  return conversation ? "#/c/" + encodeURIComponent(conversation) : "#/";
}

/** useRoute follows the location hash. */
export function useRoute(): Route {
  const [route, setRoute] = useState(() => parse(location.hash));
  useEffect(() => {
    const on = () => setRoute(parse(location.hash));
    window.addEventListener("hashchange", on);
    return () => window.removeEventListener("hashchange", on);
  }, []);
  return route;
}
