// api.ts: the REST client. Every request carries the signed-in token as
// "Authorization: Bearer"; a 401 signs the user out (the Session decides
// what the screen says) and rejects with an ApiError.

/** An error answered by the server (or the network), with its message. */
export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  constructor(status: number, code: string, message: string) {
    super(message);
    this.name = "ApiError";
    this.status = status;
    this.code = code;
  }
}

/** errorText is what a person reads for any rejected promise. */
export function errorText(err: unknown): string {
  if (err instanceof ApiError) return err.code ? `${err.message} (${err.code})` : err.message;
  if (err instanceof Error) return err.message;
  return String(err);
}

const tokenKey = "nexus.token";

type Listener = () => void;

/**
 * Session holds the user's token (kept in localStorage) and whether the
 * server asked for a sign-in, and talks REST with it.
 */
export class Session {
  token: string;
  /** signedOut: the server refused; the sign-in screen shows. */
  signedOut = false;
  /** revoked: a signed-in token stopped working. */
  revoked = false;
  private listeners = new Set<Listener>();
  /** storage keeps the token (and theme.ts the theme); null when disabled. */
  readonly storage: Storage | null;

  constructor(storage: Storage | null) {
    this.storage = storage;
    this.token = storage?.getItem(tokenKey) ?? "";
  }

  subscribe(fn: Listener): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  private notify() {
    for (const fn of this.listeners) fn();
  }

  /** unauthorized records a refusal: the token is gone or was never given. */
  unauthorized() {
    if (this.signedOut) return;
    this.revoked = this.token !== "";
    this.signedOut = true;
    this.notify();
  }

  /** signIn keeps token once the server accepts it. */
  async signIn(token: string): Promise<void> {
    const resp = await fetch("/api/tools", { headers: { Accept: "application/json", Authorization: "Bearer " + token } });
    if (resp.status === 401) throw new ApiError(401, "UNAUTHORIZED", "That token does not sign in to this Nexus.");
    if (!resp.ok) throw await failure(resp);
    this.token = token;
    this.storage?.setItem(tokenKey, token);
    this.signedOut = false;
    this.revoked = false;
    this.notify();
  }

  /** signOut forgets the token and shows the sign-in screen. */
  signOut() {
    this.token = "";
    this.storage?.removeItem(tokenKey);
    this.revoked = false;
    this.signedOut = true;
    this.notify();
  }

  /** request GETs (no body) or POSTs body as JSON, and returns the JSON answer. */
  async request<T>(path: string, body?: unknown): Promise<T> {
    const headers: Record<string, string> = { Accept: "application/json" };
    if (this.token) headers.Authorization = "Bearer " + this.token;
    const init: RequestInit = { headers };
    if (body !== undefined) {
      init.method = "POST";
      init.body = JSON.stringify(body);
      headers["Content-Type"] = "application/json";
    }
    let resp: Response;
    try {
      resp = await fetch(path, init);
    } catch (err) {
      throw new ApiError(0, "", "The server could not be reached: " + errorText(err));
    }
    if (resp.status === 401) {
      this.unauthorized();
      throw await failure(resp);
    }
    if (!resp.ok) throw await failure(resp);
    return (await resp.json()) as T;
  }

  /** call runs a tool through the REST surface. */
  call<T>(tool: string, args: Record<string, unknown> = {}): Promise<T> {
    return this.request<T>("/api/tools/" + encodeURIComponent(tool) + ":call", args);
  }
}

/** failure turns an error response ({"error":{code,message}}) into an ApiError. */
async function failure(resp: Response): Promise<ApiError> {
  let code = "";
  let message = resp.statusText || "HTTP " + resp.status;
  try {
    const data = (await resp.json()) as { error?: { code?: string; message?: string } };
    if (data.error?.message) message = data.error.message;
    if (data.error?.code) code = data.error.code;
  } catch {
    // not JSON: the status text stands
  }
  return new ApiError(resp.status, code, message);
}

// --- the shapes the UI reads --------------------------------------------------

/** Conversation is a session_list entry. */
export interface Conversation {
  id: string;
  platform: string;
  status: string;
  /** title is the stored title (session_rename); absent until it is named. */
  title?: string;
  summary?: string;
  metadata?: Record<string, unknown> | null;
  exchange_count: number;
  created_at: string;
  updated_at: string;
}

/** Exchange is an exchange_list entry. */
export interface Exchange {
  id: string;
  seq: number;
  role: string;
  content: string;
  tool_uses: StoredToolUse[] | null;
  created_at: string;
}

/** StoredToolUse is a tool call as the conversation stores it. */
export interface StoredToolUse {
  id: string;
  name: string;
  tool?: string;
  input: unknown;
  result: string;
  source: string;
  is_error?: boolean;
  /** from tool_start to tool_complete (absent in turns stored before it was kept) */
  duration_ms?: number;
}

/** Tool is a /api/tools entry. */
export interface Tool {
  name: string;
  description: string;
  source: string;
  toolbox: string;
  server: string;
  tool: string;
  title?: string;
  inputSchema: unknown;
}

/** Trace is a /api/traces item. */
export interface Trace {
  requestId: string;
  name: string;
  toolbox: string;
  server: string;
  tool: string;
  source: string;
  surface: string;
  sessionId?: string;
  workspace: string;
  userId?: string;
  startedAt: string;
  durationUs: number;
  outcome: string;
  errorCode?: string;
  argsBytes: number;
  resultBytes: number;
}

/** Page is a cursor-paginated list. */
export interface Page<T> {
  items: T[] | null;
  nextCursor?: string;
  hasMore: boolean;
  totalCount?: number;
}

/** Quota is tn_user_quota's answer. */
export interface Quota {
  user?: string;
  tier?: string;
  current: number;
  max: number;
  resetAt: string;
}

/** Credential is a tn_user_byok_list entry. */
export interface Credential {
  id: string;
  provider: string;
  label: string;
  baseUrl: string;
  maskedKey?: string;
  createdAt: string;
}
