// Where the app's data comes from: the viewer's HTTP API, or (HTML export) the JSON embedded in the page.
import type {
  ComparePage,
  EventsPage,
  ReplayScript,
  SessionDetail,
  SessionSearchResult,
  SessionsPage,
  StaticData,
  TimelinePage,
  TurnIndex,
  ViewItem,
} from "./api-types.js";

/** Filters of the sessions list. */
export interface ListFilter {
  readonly cwd?: string;
  readonly prefix?: string;
  readonly cursor?: string;
}

/** Live items as the server streams them. */
export interface LiveHandlers {
  readonly onItems: (items: readonly ViewItem[], nextSeq: number) => void;
  readonly onEnd: (reason: string) => void;
}

/** Everything the views read; both the HTTP API and an export's embedded data answer it. */
export interface DataSource {
  /** True for an export: no search, no raw events, no compare, no live updates. */
  readonly isStatic: boolean;
  sessions(filter: ListFilter): Promise<SessionsPage>;
  search(q: string, cwd?: string, cursor?: string): Promise<SessionSearchResult>;
  session(id: string): Promise<SessionDetail>;
  timeline(id: string, fromSeq: number, limit: number): Promise<TimelinePage>;
  turns(id: string): Promise<TurnIndex>;
  events(id: string, fromSeq: number, limit: number): Promise<EventsPage>;
  replay(id: string): Promise<ReplayScript>;
  compare(id: string): Promise<ComparePage>;
  /** Streams what lands from `fromSeq` on; returns the function that stops it. */
  live(id: string, fromSeq: number, handlers: LiveHandlers): () => void;
}

/** An error the API answered, with its code. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

const enc = encodeURIComponent;

/** How long the live stream waits before asking again after its connection dropped. */
const RECONNECT_MS = 2000;

function query(params: Record<string, string | number | undefined>): string {
  const parts = Object.entries(params)
    .filter(
      (entry): entry is [string, string | number] => entry[1] !== undefined && entry[1] !== "",
    )
    .map(([k, v]) => `${k}=${enc(String(v))}`);
  return parts.length === 0 ? "" : `?${parts.join("&")}`;
}

/** The API path of a session's header and lineage. */
export function sessionPath(id: string): string {
  return `/api/sessions/${enc(id)}`;
}

/** The API path of one timeline page. */
export function timelinePath(id: string, fromSeq: number, limit: number): string {
  return `/api/sessions/${enc(id)}/timeline${query({ fromSeq, limit })}`;
}

/**
 * The viewer's HTTP API, same origin; the token rides in the Authorization header (and in the
 * live stream's address, as an EventSource sends no header). `accepted` is called once, at the
 * first answer that is not a refusal of the token.
 */
export class HttpSource implements DataSource {
  readonly isStatic = false;
  constructor(
    private readonly token: string | undefined,
    private accepted?: () => void,
  ) {}

  /** Requests made ahead of the view that will ask for them (see {@link warm}), by path. */
  private readonly early = new Map<string, Promise<unknown>>();

  /**
   * Starts the requests a view at `path` makes first (a session's header and first timeline
   * page), before the app has rendered: the view then takes the answers already on their way.
   */
  warm(paths: readonly string[]): void {
    for (const path of paths) {
      const answer = this.fetchJson(path);
      // Taken by the view; an error is the view's to show when it asks.
      answer.catch(() => {});
      this.early.set(path, answer);
    }
  }

  private get<T>(path: string): Promise<T> {
    const early = this.early.get(path);
    if (early !== undefined) {
      this.early.delete(path);
      return early as Promise<T>;
    }
    return this.fetchJson(path);
  }

  private async fetchJson<T>(path: string): Promise<T> {
    const headers: Record<string, string> = { accept: "application/json" };
    if (this.token !== undefined) headers.authorization = `Bearer ${this.token}`;
    const response = await fetch(path, { headers, credentials: "omit" });
    if (response.status !== 401 && this.accepted !== undefined) {
      this.accepted();
      this.accepted = undefined;
    }
    const text = await response.text();
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new ApiError(response.status, "BAD_RESPONSE", text.slice(0, 200));
    }
    if (!response.ok) {
      const error = (body as { error?: { code?: string; message?: string } }).error;
      throw new ApiError(response.status, error?.code ?? "HTTP", error?.message ?? text);
    }
    return body as T;
  }

  sessions(filter: ListFilter): Promise<SessionsPage> {
    return this.get(`/api/sessions${query({ ...filter })}`);
  }
  search(q: string, cwd?: string, cursor?: string): Promise<SessionSearchResult> {
    return this.get(`/api/search${query({ q, cwd, cursor })}`);
  }
  session(id: string): Promise<SessionDetail> {
    return this.get(sessionPath(id));
  }
  timeline(id: string, fromSeq: number, limit: number): Promise<TimelinePage> {
    return this.get(timelinePath(id, fromSeq, limit));
  }
  turns(id: string): Promise<TurnIndex> {
    return this.get(`/api/sessions/${enc(id)}/turns`);
  }
  events(id: string, fromSeq: number, limit: number): Promise<EventsPage> {
    return this.get(`/api/sessions/${enc(id)}/events${query({ fromSeq, limit })}`);
  }
  replay(id: string): Promise<ReplayScript> {
    return this.get(`/api/sessions/${enc(id)}/replay`);
  }
  compare(id: string): Promise<ComparePage> {
    return this.get(`/api/sessions/${enc(id)}/compare`);
  }
  live(id: string, fromSeq: number, handlers: LiveHandlers): () => void {
    let next = fromSeq;
    let stopped = false;
    let source: EventSource | undefined;
    let retry: ReturnType<typeof setTimeout> | undefined;
    const open = () => {
      source = new EventSource(
        `/api/sessions/${enc(id)}/live${query({ fromSeq: next, token: this.token })}`,
      );
      source.addEventListener("items", (event) => {
        const data = JSON.parse((event as MessageEvent<string>).data) as {
          items: ViewItem[];
          nextSeq: number;
        };
        next = data.nextSeq;
        handlers.onItems(data.items, data.nextSeq);
      });
      source.addEventListener("end", (event) => {
        const data = JSON.parse((event as MessageEvent<string>).data) as { reason?: string };
        stopped = true;
        source?.close();
        handlers.onEnd(data.reason ?? "ended");
      });
      // EventSource would reconnect by itself to the same address, from the seq it first asked
      // for, and draw what it already drew again: reconnect here, from the last seq received.
      source.addEventListener("error", () => {
        source?.close();
        if (!stopped) retry = setTimeout(open, RECONNECT_MS);
      });
    };
    open();
    return () => {
      stopped = true;
      if (retry !== undefined) clearTimeout(retry);
      source?.close();
    };
  }
}

/** What a failed request says to the reader: the API's code and message, or the error itself. */
export function errorText(error: unknown): string {
  if (error instanceof ApiError) return `${error.code}: ${error.message}`;
  return error instanceof Error ? error.message : String(error);
}

function unavailable(what: string): Promise<never> {
  return Promise.reject(new ApiError(0, "NOT_IN_EXPORT", `${what} is not part of an export`));
}

/** An HTML export: one session's data embedded in the page; nothing is fetched. */
export class StaticSource implements DataSource {
  readonly isStatic = true;
  constructor(readonly data: StaticData) {}

  sessions(): Promise<SessionsPage> {
    return Promise.resolve({ sessions: [this.data.session] });
  }
  search(): Promise<SessionSearchResult> {
    return unavailable("search");
  }
  session(id: string): Promise<SessionDetail> {
    const { session, header, lineage } = this.data;
    if (id !== session.sessionId) return unavailable(`session ${id}`);
    return Promise.resolve({ session, header, lineage });
  }
  timeline(_id: string, fromSeq: number): Promise<TimelinePage> {
    const items = this.data.timeline.items.filter((item) => item.seq >= fromSeq);
    const length = this.data.session.eventCount;
    return Promise.resolve({ items, fromSeq, nextSeq: length, length, done: true });
  }
  turns(): Promise<TurnIndex> {
    const turns = this.data.timeline.items.flatMap((item) =>
      item.kind === "turn" ? [{ turn: item.turn, seq: item.seq }] : [],
    );
    return Promise.resolve({ turns });
  }
  events(): Promise<EventsPage> {
    return unavailable("the raw events");
  }
  replay(): Promise<ReplayScript> {
    const { replay, replayError } = this.data;
    if (replay !== undefined) return Promise.resolve(replay);
    if (replayError === undefined) return unavailable("the replay script");
    return Promise.reject(new ApiError(0, replayError.code, replayError.message));
  }
  compare(): Promise<ComparePage> {
    return unavailable("the comparison");
  }
  live(): () => void {
    return () => {};
  }
}

/** The export's embedded data when the page holds it (`#seedline-data`), else undefined. */
export function embeddedData(): StaticData | undefined {
  const element = document.getElementById("seedline-data");
  if (element === null) return undefined;
  return JSON.parse(element.textContent ?? "null") as StaticData;
}
