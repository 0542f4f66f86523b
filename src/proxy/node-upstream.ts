// The proxy server's way to its upstreams: node:http(s) under a fetch signature, so a relayed body's bytes go from one socket to the other with no web stream between them.
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";

/**
 * How long an upstream may send nothing (no headers, no body bytes) before the call fails, as
 * fetch's own headers and body timeouts (300 s) do.
 */
const IDLE_TIMEOUT_MS = 300_000;

/** The node stream behind each answer's body, by answer (see {@link chunkReaderOf}). */
const NODE_BODY = new WeakMap<Response, IncomingMessage>();

/** Something to read a body's chunks from, one at a time. */
export interface ChunkReader {
  read(): Promise<{ readonly done: boolean; readonly value?: Uint8Array | undefined }>;
}

/**
 * A reader of `response`'s body (which must not be null): from the node stream it came on when a
 * {@link NodeUpstream} gave it and nothing read its web stream yet, else from that web stream.
 */
export function chunkReaderOf(response: Response): ChunkReader {
  const incoming = NODE_BODY.get(response);
  if (incoming === undefined) {
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    return { read: () => reader.read() };
  }
  NODE_BODY.delete(response);
  const chunks = incoming[Symbol.asyncIterator]();
  return {
    read: () => chunks.next() as Promise<{ done: boolean; value?: Uint8Array | undefined }>,
  };
}

/** A fetch over node:http(s) with connections kept alive; {@link close} ends them. */
export interface NodeUpstream {
  /**
   * Sends a request: the URL as a string or URL, a string or bytes body. The answer's body is a
   * web stream read from the socket only once it is read (see {@link chunkReaderOf} to take the
   * node stream instead). The body is sent as it is: no compression is asked for.
   */
  readonly fetch: typeof fetch;
  /** Closes the kept-alive connections. */
  close(): void;
}

/** Options of {@link nodeUpstream}. */
export interface NodeUpstreamOptions {
  /** How long the upstream may send nothing before the call fails (default 300 s). */
  readonly idleTimeoutMs?: number;
}

/** A {@link NodeUpstream}. */
export function nodeUpstream(options: NodeUpstreamOptions = {}): NodeUpstream {
  const idleTimeoutMs = options.idleTimeoutMs ?? IDLE_TIMEOUT_MS;
  const agents = {
    http: new HttpAgent({ keepAlive: true }),
    https: new HttpsAgent({ keepAlive: true }),
  };
  const send = (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
    if (input instanceof Request) {
      return Promise.reject(new TypeError("expected the upstream's URL, got a Request"));
    }
    const url = typeof input === "string" ? new URL(input) : input;
    const body = init.body ?? undefined;
    if (body !== undefined && typeof body !== "string" && !(body instanceof Uint8Array)) {
      return Promise.reject(new TypeError("expected a string or bytes body for the upstream"));
    }
    const signal = init.signal ?? undefined;
    if (signal?.aborted) return Promise.reject(signal.reason);
    const headers: Record<string, string> = {};
    new Headers(init.headers).forEach((value, name) => {
      headers[name] = value;
    });
    if (body !== undefined) headers["content-length"] = String(Buffer.byteLength(body));
    const secure = url.protocol === "https:";
    if (!secure && url.protocol !== "http:") {
      return Promise.reject(new TypeError(`expected an http: or https: upstream, got ${url.href}`));
    }
    return new Promise<Response>((resolve, reject) => {
      const request = (secure ? httpsRequest : httpRequest)(url, {
        method: init.method ?? "GET",
        headers,
        agent: secure ? agents.https : agents.http,
      });
      const onAbort = () => request.destroy(signal?.reason as Error);
      signal?.addEventListener("abort", onAbort, { once: true });
      request.setTimeout(idleTimeoutMs, () => {
        request.destroy(
          Object.assign(new Error(`the upstream sent nothing for ${idleTimeoutMs / 1000} s`), {
            code: "ETIMEDOUT",
          }),
        );
      });
      request.once("error", (error) => {
        signal?.removeEventListener("abort", onAbort);
        reject(error);
      });
      request.once("response", (incoming) => {
        incoming.once("close", () => signal?.removeEventListener("abort", onAbort));
        const response = responseOf(incoming);
        NODE_BODY.set(response, incoming);
        resolve(response);
      });
      request.end(body);
    });
  };
  return {
    fetch: send as typeof fetch,
    close() {
      agents.http.destroy();
      agents.https.destroy();
    },
  };
}

/** Statuses whose answers have no body, as fetch's `Response` requires. */
const NO_BODY = new Set([101, 103, 204, 205, 304]);

function responseOf(incoming: IncomingMessage): Response {
  const headers = new Headers();
  const raw = incoming.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2)
    headers.append(raw[i] as string, raw[i + 1] as string);
  const status = incoming.statusCode ?? 502;
  if (NO_BODY.has(status)) {
    incoming.resume();
    return new Response(null, { status, statusText: incoming.statusMessage ?? "", headers });
  }
  let response: Response | undefined;
  let flowing = false;
  // Nothing is read from the socket until the web stream is: a reader taking the node stream
  // (chunkReaderOf) gets every byte.
  const body = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (!flowing) {
          flowing = true;
          if (response !== undefined) NODE_BODY.delete(response);
          incoming.on("data", (chunk: Buffer) => {
            controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
            if ((controller.desiredSize ?? 0) <= 0) incoming.pause();
          });
          incoming.once("end", () => controller.close());
          incoming.once("error", (error) => controller.error(error));
        }
        incoming.resume();
      },
      cancel() {
        incoming.destroy();
      },
    },
    { highWaterMark: 0 },
  );
  response = new Response(body, { status, statusText: incoming.statusMessage ?? "", headers });
  return response;
}
