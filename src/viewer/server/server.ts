// The viewer's HTTP server (node:http): Host check, token, read-only and same-origin writes, the JSON API, the live stream and the built front end.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { packageInfo } from "../../rpc/package-info.js";
import type { SessionStore } from "../../store/session-store.js";
import { readAssets, type ViewerAssets } from "./assets.js";
import { errorResponse, HttpError, intParam } from "./http-errors.js";
import { type LiveStats, LiveStreams } from "./live.js";
import { apiFork, apiGet, type RouteContext } from "./routes.js";
import {
  allowedHosts,
  CLEAR_LEGACY_COOKIE,
  crossOriginWrite,
  givenToken,
  hasLegacyCookie,
  newToken,
  SECURITY_HEADERS,
  TOKEN_REFUSAL,
  tokenMatches,
} from "./security.js";

/** How a viewer server is started. */
export interface ViewerServerOptions {
  readonly store: SessionStore;
  /** The store's URL as the user may see it (a password already taken out): told by /api/info. */
  readonly storeLabel: string;
  /** The address to bind: 127.0.0.1 unless given. */
  readonly host?: string;
  /** The port; 0 (the default) picks a free one. */
  readonly port?: number;
  /** Allows the one write, `POST /api/sessions/:id/fork`; every other non-GET is still 405. */
  readonly allowWrite?: boolean;
  /** The built front end; read from dist/viewer when absent. */
  readonly assets?: ViewerAssets;
  /** The token; a new random one when absent. */
  readonly token?: string;
  /** Where the server's log lines go (a live stream closed for a client that stopped reading); stderr unless given. */
  readonly log?: (line: string) => void;
  /** How long (ms) a live stream may wait for its client to read before it is closed; 30 000 unless given. */
  readonly liveStallMs?: number;
  /** How many live streams may be open at once; 64 unless given. */
  readonly maxLiveStreams?: number;
}

/** A running viewer server. */
export interface ViewerServer {
  /** The address to open, with the token: `http://HOST:PORT/?token=TOKEN`. */
  readonly url: string;
  readonly port: number;
  readonly token: string;
  /** What the live streams hold now. */
  liveStats(): LiveStats;
  /** Stops listening, ends the live streams and closes every connection (the store stays open). */
  close(): Promise<void>;
}

/**
 * Starts the viewer's server. Its front end is read first: a checkout never built fails here.
 * @throws AssetsMissingError when dist/viewer lacks the built files; the listen error (EADDRINUSE, …).
 */
export async function startViewerServer(options: ViewerServerOptions): Promise<ViewerServer> {
  const assets = options.assets ?? readAssets();
  const host = options.host ?? "127.0.0.1";
  const token = options.token ?? newToken();
  const stop = new AbortController();
  const ctx: RouteContext = {
    store: options.store,
    info: {
      version: packageInfo().version,
      readOnly: options.allowWrite !== true,
      store: options.storeLabel,
    },
  };
  const live = new LiveStreams({
    store: options.store,
    log: options.log ?? ((line) => process.stderr.write(`${line}\n`)),
    ...(options.liveStallMs === undefined ? {} : { stallMs: options.liveStallMs }),
    ...(options.maxLiveStreams === undefined ? {} : { maxStreams: options.maxLiveStreams }),
  });
  let hosts: ReadonlySet<string> = new Set();
  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => answerError(res, error));
  });
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    // The Host check comes before the token: a rebound name never learns whether a token works.
    const hostHeader = (req.headers.host ?? "").toLowerCase();
    if (!hosts.has(hostHeader)) {
      return text(
        res,
        421,
        `seedline ui: expected a Host of ${[...hosts].join(" or ")}, got ${JSON.stringify(req.headers.host ?? "")}`,
      );
    }
    // Older viewers kept the token in a cookie, which the browser sends to every port of the
    // host: it is dropped wherever it still comes in.
    if (hasLegacyCookie(req)) res.setHeader("Set-Cookie", CLEAR_LEGACY_COOKIE);
    const url = new URL(req.url ?? "/", "http://viewer.invalid");
    const parts = pathParts(url);
    const write = req.method !== "GET" && req.method !== "HEAD";
    // The app's own files (its page, script and styles) hold nothing of the store: they are
    // served without the token, so a page reloaded or opened from a deep link can start and take
    // the token from where this origin's page kept it. Everything else needs the token.
    if (parts[0] === "api" || write) {
      const given = givenToken(req, url);
      if (!tokenMatches(token, given.token))
        throw new HttpError(401, "TOKEN_REQUIRED", TOKEN_REFUSAL);
      if (write) {
        const cross = crossOriginWrite(req, hosts);
        if (cross !== undefined) throw new HttpError(403, "CROSS_ORIGIN", cross);
        if (!given.inHeader) {
          throw new HttpError(
            401,
            "TOKEN_REQUIRED",
            "expected the token of a write in an Authorization: Bearer header (a header no other page can make a browser send), got it in the address",
          );
        }
        const fork =
          parts.length === 4 &&
          parts[0] === "api" &&
          parts[1] === "sessions" &&
          parts[3] === "fork";
        if (options.allowWrite === true && req.method === "POST" && fork) {
          return json(res, 200, await apiFork(ctx, req, parts.slice(1)));
        }
        res.setHeader("Allow", options.allowWrite === true && fork ? "GET, POST" : "GET");
        throw new HttpError(
          405,
          "METHOD_NOT_ALLOWED",
          options.allowWrite === true
            ? `expected GET (or POST to /api/sessions/ID/fork), got ${req.method}`
            : `expected GET: the viewer is read-only (seedline ui --allow-write allows forking), got ${req.method}`,
        );
      }
      const api = parts.slice(1);
      if (api.length === 3 && api[0] === "sessions" && api[2] === "live") {
        const id = await options.store.resolveId(api[1] as string);
        const fromSeq = intParam(url, "fromSeq", 0, 0, Number.MAX_SAFE_INTEGER);
        return live.serve(id, fromSeq, res, stop.signal);
      }
      return json(res, 200, await apiGet(ctx, url, api));
    }
    if (parts[0] === "assets" && parts.length === 2) {
      if (parts[1] === "app.js")
        return asset(res, assets["app.js"], "text/javascript; charset=utf-8");
      if (parts[1] === "app.css") return asset(res, assets["app.css"], "text/css; charset=utf-8");
      throw new HttpError(
        404,
        "NOT_FOUND",
        `expected /assets/app.js or /assets/app.css, got ${JSON.stringify(url.pathname)}`,
      );
    }
    // Every other path is a page of the app, which routes on the client.
    return asset(res, assets["index.html"], "text/html; charset=utf-8");
  };
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  hosts = allowedHosts(host, port);
  const shown = host.includes(":") ? `[${host}]` : host;
  return {
    url: `http://${shown}:${port}/?token=${token}`,
    port,
    token,
    liveStats: () => live.stats,
    async close() {
      stop.abort();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}

/** The decoded segments of a path. @throws HttpError INVALID_PARAMS for a malformed %-escape. */
function pathParts(url: URL): string[] {
  try {
    return url.pathname
      .split("/")
      .filter((p) => p !== "")
      .map(decodeURIComponent);
  } catch {
    throw new HttpError(
      400,
      "INVALID_PARAMS",
      `expected a path of %-escaped UTF-8, got ${JSON.stringify(url.pathname)}`,
    );
  }
}

function json(res: ServerResponse, status: number, body: unknown): void {
  const data = JSON.stringify(body);
  res.writeHead(status, {
    ...SECURITY_HEADERS,
    "Content-Type": "application/json; charset=utf-8",
    "Cache-Control": "no-store",
  });
  res.end(data);
}

function text(res: ServerResponse, status: number, message: string): void {
  res.writeHead(status, {
    ...SECURITY_HEADERS,
    "Content-Type": "text/plain; charset=utf-8",
    "Cache-Control": "no-store",
  });
  res.end(`${message}\n`);
}

function asset(res: ServerResponse, body: string, type: string): void {
  res.writeHead(200, { ...SECURITY_HEADERS, "Content-Type": type, "Cache-Control": "no-store" });
  res.end(body);
}

function answerError(res: ServerResponse, error: unknown): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  const { status, body } = errorResponse(error);
  json(res, status, body);
}
