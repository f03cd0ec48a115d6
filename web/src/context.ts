// context.ts: the page's services, handed to components through context
// (no globals).
import { createContext } from "preact";
import { useContext } from "preact/hooks";
import type { Session } from "./api";
import type { ChatStore } from "./chat";
import type { List, Titles } from "./conversations";

/** Services are the page's long-lived objects. */
export interface Services {
  session: Session;
  chat: ChatStore;
  /** chats are the conversations of this chat (platform "chat"); others the other clients' sessions. */
  chats: List;
  others: List;
  titles: Titles;
}

/** ServicesContext carries the Services. */
export const ServicesContext = createContext<Services | null>(null);

/** useServices returns the page's Services. */
export function useServices(): Services {
  const s = useContext(ServicesContext);
  if (!s) throw new Error("useServices outside ServicesContext");
  return s;
}
