// The viewer's JSON API: each GET route over the store, and the one write (fork) allowed only with --allow-write.
import type { IncomingMessage } from "node:http";
import { storedSessionScript } from "../../replay/store-scripts.js";
import { listEntryOf } from "../../store/listing/list-entry.js";
import type { SessionStore } from "../../store/session-store.js";
import { HttpError, intParam, textParam } from "./http-errors.js";
import {
  compareFork,
  DEFAULT_PAGE_EVENTS,
  lineageOf,
  MAX_PAGE_EVENTS,
  rawPage,
  storedListed,
  timelinePage,
  turnIndex,
} from "./session-views.js";

/** What a route needs: the store, and what the server tells of itself. */
export interface RouteContext {
  readonly store: SessionStore;
  readonly info: { readonly version: string; readonly readOnly: boolean; readonly store: string };
}

/** The most sessions one list page asks for. */
const MAX_LIST = 100;

/**
 * The JSON answer of a GET under /api (without the live stream).
 * @throws HttpError NOT_FOUND for a path no route serves, INVALID_PARAMS for a bad parameter;
 *   the store's errors (SESSION_NOT_FOUND, …), mapped by the caller.
 */
export async function apiGet(
  ctx: RouteContext,
  url: URL,
  parts: readonly string[],
): Promise<unknown> {
  const { store } = ctx;
  if (parts.length === 1 && parts[0] === "info") return ctx.info;
  if (parts.length === 1 && parts[0] === "search") {
    const query = textParam(url, "q");
    if (query === undefined) {
      throw new HttpError(400, "INVALID_PARAMS", "expected q, the text to search for, got none");
    }
    const cwd = textParam(url, "cwd");
    const cursor = textParam(url, "cursor");
    return store.search({
      query,
      ...(cwd === undefined ? {} : { cwd }),
      ...(cursor === undefined ? {} : { cursor }),
      limit: intParam(url, "limit", 20, 1, 100),
    });
  }
  if (parts[0] !== "sessions") throw notFound(url);
  if (parts.length === 1) return listSessions(store, url);
  const id = await store.resolveId(parts[1] as string);
  if (parts.length === 2) {
    const session = listEntryOf(await storedListed(store, id));
    return { session, header: session.header, lineage: await lineageOf(store, id) };
  }
  if (parts.length !== 3) throw notFound(url);
  const limit = () => intParam(url, "limit", DEFAULT_PAGE_EVENTS, 1, MAX_PAGE_EVENTS);
  const fromSeq = () => intParam(url, "fromSeq", 0, 0, Number.MAX_SAFE_INTEGER);
  switch (parts[2]) {
    case "timeline":
      return timelinePage(store, id, fromSeq(), limit());
    case "events":
      return rawPage(store, id, fromSeq(), limit());
    case "turns":
      return { turns: await turnIndex(store, id) };
    case "replay": {
      const script = await storedSessionScript(store, id);
      return {
        sessionId: script.sessionId,
        seedLength: script.seedLength,
        entries: script.entries,
      };
    }
    case "compare":
      return compareFork(store, id, limit());
    default:
      throw notFound(url);
  }
}

async function listSessions(store: SessionStore, url: URL): Promise<unknown> {
  const cwd = textParam(url, "cwd");
  const prefix = textParam(url, "prefix");
  const cursor = textParam(url, "cursor");
  const limit = intParam(url, "limit", 50, 1, MAX_LIST);
  // An id prefix narrows the page the store lists: pages are read until one has a match or the
  // list ends, so a prefix never answers an empty page while later pages match.
  let next = cursor;
  for (;;) {
    const page = await store.list({
      limit,
      ...(cwd === undefined ? {} : { cwd }),
      ...(next === undefined ? {} : { cursor: next }),
    });
    const sessions = page.sessions
      .filter((s) => prefix === undefined || s.header.id.startsWith(prefix))
      .map(listEntryOf);
    if (sessions.length > 0 || page.nextCursor === undefined || prefix === undefined) {
      return {
        sessions,
        ...(page.nextCursor === undefined ? {} : { nextCursor: page.nextCursor }),
      };
    }
    next = page.nextCursor;
  }
}

/** The most bytes a write request's body may have. */
const MAX_BODY = 4096;

/**
 * `POST /api/sessions/:id/fork` (only with --allow-write): forks the session at `boundary` (its
 * last event when absent) and answers the child's header.
 */
export async function apiFork(
  ctx: RouteContext,
  req: IncomingMessage,
  parts: readonly string[],
): Promise<unknown> {
  const id = await ctx.store.resolveId(parts[1] as string);
  const body = await readBody(req);
  let params: { boundary?: unknown } = {};
  if (body.trim() !== "") {
    try {
      params = JSON.parse(body) as { boundary?: unknown };
    } catch {
      throw new HttpError(
        400,
        "INVALID_PARAMS",
        `expected a JSON body, got ${JSON.stringify(body.slice(0, 80))}`,
      );
    }
  }
  const boundary = params.boundary;
  if (boundary !== undefined && (typeof boundary !== "number" || !Number.isSafeInteger(boundary))) {
    throw new HttpError(
      400,
      "INVALID_PARAMS",
      `expected boundary an integer seq, got ${JSON.stringify(boundary)}`,
    );
  }
  const header = await ctx.store.fork(id, boundary === undefined ? {} : { boundary });
  return { header };
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY) {
      throw new HttpError(
        400,
        "INVALID_PARAMS",
        `expected a body of at most ${MAX_BODY} bytes, got more`,
      );
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString("utf8");
}

function notFound(url: URL): HttpError {
  return new HttpError(
    404,
    "NOT_FOUND",
    `expected an API route, got ${JSON.stringify(url.pathname)}`,
  );
}
