// `seedline proxy`'s HTTP server: provider base URLs on 127.0.0.1, each call handed to the model proxy core.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { SessionStore } from "../store/session-store.js";
import { answerHeaders, forwardHeaders, relayDirect, wholeBodyOf } from "./http-parts.js";
import { type CallRequest, ModelProxy } from "./model-proxy.js";
import { nodeUpstream } from "./node-upstream.js";
import { PROVIDERS, type ProxyRoute, routeOf } from "./routes.js";
import type { ProxyMode } from "./types.js";

/**
 * The message text the store behind `seedline proxy` keeps unpacked (`unpackedTextBudget`): a
 * proxy writes its sessions for as long as it runs and reads their messages back rarely, so its
 * memory stays flat however many calls it records.
 */
export const PROXY_UNPACKED_TEXT = 256 * 1024;

/** Options of {@link startProxyServer}. */
export interface ProxyServerOptions {
  readonly store: SessionStore;
  readonly mode: ProxyMode;
  readonly sessionId?: string;
  /** Default 127.0.0.1. */
  readonly host?: string;
  /** Default 0: any free port. */
  readonly port?: number;
  /** Upstream base URLs by provider name (`openai`, `anthropic`), replacing the public endpoints. */
  readonly upstreams?: Readonly<Record<string, string>>;
  /** Told about a recording that failed after the caller got its answer. */
  readonly onRecordError?: (error: unknown) => void;
}

/** A running proxy server. */
export interface ProxyServer {
  /** `http://HOST:PORT`. */
  readonly url: string;
  /**
   * Resolves once the calls answered so far are recorded whole (a caller's response ends when the
   * upstream's does; its step is stored just after).
   */
  settled(): Promise<void>;
  /** Stops taking calls, lets the calls and recordings in flight finish, then ends open turns durably. */
  close(): Promise<void>;
}

/** Starts the proxy's HTTP server; resolves once it listens. */
export async function startProxyServer(options: ProxyServerOptions): Promise<ProxyServer> {
  const proxy = new ModelProxy({
    store: options.store,
    mode: options.mode,
    ...(options.sessionId === undefined ? {} : { sessionId: options.sessionId }),
    ...(options.onRecordError === undefined ? {} : { onRecordError: options.onRecordError }),
  });
  // node:http(s), not fetch: a relayed body goes from socket to socket with no web stream between.
  const nodeFetch = nodeUpstream();
  const upstream = nodeFetch.fetch;
  const inFlight = new Set<Promise<void>>();
  const server = createServer((req, res) => {
    const done = serveOne(req, res).catch((error: unknown) => {
      if (!res.headersSent) {
        res.writeHead(502, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: { message: String(error), code: "UPSTREAM_FAILED" } }));
      } else res.destroy();
    });
    inFlight.add(done);
    void done.finally(() => inFlight.delete(done));
  });

  async function serveOne(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const route = routeOf(req.url ?? "/");
    if (route === undefined) {
      res.writeHead(404, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          error: {
            message: `expected a path under ${PROVIDERS.map((p) => p.mount).join(" or ")}, got ${req.url}`,
            code: "NOT_FOUND",
          },
        }),
      );
      return;
    }
    const abort = new AbortController();
    res.on("close", () => {
      if (!res.writableFinished) abort.abort();
    });
    const body = await readBody(req);
    const method = req.method ?? "GET";
    let headers: Headers | undefined;
    // The headers are made when asked for: a replayed call never sends them on.
    const request: CallRequest = {
      method,
      get headers() {
        headers ??= headersOf(req);
        return headers;
      },
      signal: abort.signal,
      text: async () => body.toString("utf8"),
    };
    const upstreamUrl = upstreamOf(route, options.upstreams);
    let response: Response;
    if (route.adapter !== undefined && request.method === "POST") {
      response = await proxy.handle({
        adapter: route.adapter,
        request,
        upstreamUrl,
        upstream,
        ...(route.sessionId === undefined ? {} : { sessionId: route.sessionId }),
      });
    } else if (options.mode === "replay") {
      response = new Response(
        JSON.stringify({
          error: {
            message: `replay answers recorded model calls only, not ${req.method} ${req.url}`,
            code: "NOT_RECORDED",
          },
        }),
        { status: 404, headers: { "content-type": "application/json" } },
      );
    } else {
      const passed = await upstream(upstreamUrl, {
        method,
        headers: forwardHeaders(request.headers),
        ...(body.length === 0 || method === "GET" || method === "HEAD" ? {} : { body }),
        signal: abort.signal,
      });
      response = new Response(passed.body, {
        status: passed.status,
        headers: answerHeaders(passed.headers, {}),
      });
    }
    await writeResponse(response, res);
  }

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, options.host ?? "127.0.0.1", () => resolve());
  });
  const address = server.address() as AddressInfo;
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  return {
    url: `http://${host}:${address.port}`,
    async settled() {
      // Together: the proxy's recordings do not wait for a pause in the calls in flight then.
      await Promise.all([...inFlight, proxy.settled()]);
      await proxy.settled();
    },
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      await Promise.all([...inFlight]);
      await proxy.close();
      await closed;
      nodeFetch.close();
    },
  };
}

function upstreamOf(
  route: ProxyRoute,
  upstreams: Readonly<Record<string, string>> | undefined,
): string {
  const base = upstreams?.[route.provider.name] ?? route.provider.upstream;
  return `${base.replace(/\/+$/, "")}${route.rest}`;
}

/** The headers of a request as a fetch `Headers`. */
function headersOf(req: IncomingMessage): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (typeof value === "string") headers.set(name, value);
    else if (Array.isArray(value)) for (const v of value) headers.append(name, v);
  }
  return headers;
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const part of req) parts.push(part as Buffer);
  return Buffer.concat(parts);
}

/** Writes a web Response to the caller as its bytes arrive, waiting for the socket to drain. */
async function writeResponse(response: Response, res: ServerResponse): Promise<void> {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    headers[name] = value;
  });
  const whole = wholeBodyOf(response);
  if (whole !== undefined) {
    // One write, its length known: no chunked framing, no stream to read it back from.
    const bytes = Buffer.from(whole);
    headers["content-length"] = String(bytes.length);
    res.writeHead(response.status, headers);
    res.end(bytes);
    return;
  }
  res.writeHead(response.status, headers);
  const direct = relayDirect(response, {
    write: (chunk) => res.write(chunk),
    drained: () => drainedOrClosed(res),
    get gone() {
      return res.destroyed;
    },
  });
  if (direct !== undefined) {
    try {
      await direct;
      res.end();
    } catch {
      // The upstream broke off mid-stream: the caller sees the connection break off too.
      res.destroy();
    }
    return;
  }
  if (response.body === null) {
    res.end();
    return;
  }
  const reader = response.body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (res.destroyed) {
        await reader.cancel();
        return;
      }
      if (!res.write(value)) await drainedOrClosed(res);
    }
    res.end();
  } catch {
    // The upstream broke off mid-stream: the caller sees the connection break off too.
    res.destroy();
  }
}

/** Resolves once `res` has drained, or closed (a caller gone never drains). */
function drainedOrClosed(res: ServerResponse): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = () => {
      res.off("drain", done);
      res.off("close", done);
      resolve();
    };
    res.on("drain", done);
    res.on("close", done);
  });
}
