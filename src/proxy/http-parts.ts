// The HTTP side of the proxy's core: which headers go on, which come back, errors as text and codes.
import type { RenderedAnswer } from "./types.js";

/** Response headers the upstream's body no longer matches once fetch has decoded it. */
const DROPPED_HEADERS = ["content-encoding", "content-length", "transfer-encoding", "connection"];
/** Request headers that belong to the caller's connection, not to the upstream's. */
const HOP_HEADERS = ["host", "content-length", "connection", "accept-encoding"];

/** The caller's headers for the upstream (credentials included: they are sent on, never stored). */
export function forwardHeaders(headers: Headers): Headers {
  const out = new Headers(headers);
  for (const name of HOP_HEADERS) out.delete(name);
  return out;
}

/** The upstream's response headers for the caller, with the proxy's own added. */
export function answerHeaders(upstream: Headers, extra: Record<string, string>): Headers {
  const out = new Headers(upstream);
  for (const name of DROPPED_HEADERS) out.delete(name);
  for (const [name, value] of Object.entries(extra)) out.set(name, value);
  return out;
}

/** The whole bodies of the answers the proxy rendered itself, by answer (see {@link wholeBodyOf}). */
const WHOLE = new WeakMap<Response, string>();

/** A rendered answer as a Response. */
export function answer(rendered: RenderedAnswer, headers: Record<string, string> = {}): Response {
  const response = new Response(rendered.body, {
    status: rendered.status,
    headers: { "content-type": rendered.contentType, ...headers },
  });
  WHOLE.set(response, rendered.body);
  return response;
}

/**
 * The whole body of an answer the proxy rendered itself (a replayed call, a refusal), which a
 * server writes at once rather than reading it back from the Response's stream; undefined for
 * any other response (one relayed from the upstream streams as it comes).
 */
export function wholeBodyOf(response: Response): string | undefined {
  return WHOLE.get(response);
}

/** Where a relayed body's bytes go when a server takes them straight (see {@link relayDirect}). */
export interface DirectSink {
  /** Writes one chunk; false when the caller's socket is full. */
  write(chunk: Uint8Array): boolean;
  /** Resolves once a full socket has drained. */
  drained(): Promise<void>;
  /** Whether the caller has gone (its connection closed). */
  readonly gone: boolean;
}

/** A relayed body a server may take straight from the upstream's reader, by answer. */
const DIRECT = new WeakMap<Response, (sink: DirectSink) => Promise<void> | undefined>();

/**
 * Marks `response` (whose body relays the upstream's) as one a server may write straight to its
 * caller with {@link relayDirect}: `take` gives the bytes to the sink, bypassing the Response's
 * own stream, or undefined when some already went into that stream (then it is read as usual).
 */
export function relayable(
  response: Response,
  take: (sink: DirectSink) => Promise<void> | undefined,
): Response {
  DIRECT.set(response, take);
  return response;
}

/**
 * Writes a relayed body straight to `sink` (one web stream less between the upstream's socket
 * and the caller's); resolves when the body has ended, rejects when it broke off. Undefined when
 * `response` cannot be taken so: read its body instead.
 */
export function relayDirect(response: Response, sink: DirectSink): Promise<void> | undefined {
  return DIRECT.get(response)?.(sink);
}

/** A body as JSON when it is JSON, else its text (undefined when empty). */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text === "" ? undefined : text;
  }
}

/** An error's message with its cause's (fetch hides the reason in `cause`). */
export function messageOf(error: unknown): string {
  if (error instanceof Error) {
    const cause = error.cause instanceof Error ? ` (${error.cause.message})` : "";
    return `${error.message}${cause}`;
  }
  return String(error);
}

/** The first string `code` along an error's cause chain (`ECONNREFUSED` under fetch's TypeError). */
export function codeOf(error: unknown): string | undefined {
  for (let e = error, depth = 0; e !== null && typeof e === "object" && depth < 5; depth++) {
    const { code, cause } = e as { code?: unknown; cause?: unknown };
    if (typeof code === "string") return code;
    e = cause;
  }
  return undefined;
}
