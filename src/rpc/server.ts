// serve(): seedline's JSON-RPC server over one stream pair — the store, the handlers, ordering, idle unloading, shutdown.
import { RPC_METHOD, RPC_NOTIFICATION } from "../generated.js";
import type { AcpToolPresenter } from "../log/acp-updates.js";
import type { SessionStore } from "../store/session-store.js";
import { KeyedQueue } from "../util/keyed-queue.js";
import { openServerConnection } from "./connection.js";
import { createDispatcher } from "./dispatch.js";
import type { Framing } from "./framing.js";
import { createHandlers } from "./handlers.js";
import { DEFAULT_IDLE_MS, IdleSessions } from "./idle-sessions.js";
import { ImportUploads } from "./import-uploads.js";
import { DEFAULT_MAX_REPLAYS, DEFAULT_REPLAY_IDLE_MS, OpenReplays } from "./open-replays.js";
import { ConnectionWatches } from "./watches.js";

/** How `serve` runs. */
export interface ServeOptions {
  /** The store the methods work on; the caller opens it and closes it after `closed`. */
  store: SessionStore;
  /** Where requests come from (stdin for `seedline serve`). */
  input: NodeJS.ReadableStream;
  /** Where responses go (stdout): protocol messages only. */
  output: NodeJS.WritableStream;
  /** Message framing; "ndjson" (one message per line, ACP's) unless told otherwise. */
  framing?: Framing;
  /** Where log lines go (never `output`); stderr unless told otherwise. */
  log?: (line: string) => void;
  /** The store kind `initialize` reports; the backend's own kind unless told otherwise. */
  storeKind?: string;
  /** The store URL, for the hint line printed when `input` is a terminal. */
  storeUrl?: string;
  /** How long (ms) a session may go unused before it is unloaded; 60 000 unless told otherwise. */
  idleMs?: number;
  /**
   * How many events of one watch may wait to be written to a client that reads slowly (beyond
   * them the watch waits for the client, reading nothing more from the store); 10 000 unless
   * told otherwise.
   */
  watchBufferEvents?: number;
  /**
   * How long (ms) a watch's full buffer may go without the client reading before the watch is
   * ended with WATCH_OVERFLOW; 5 000 unless told otherwise.
   */
  watchStallMs?: number;
  /**
   * How long (ms) a replay may go unused by replay/next before it expires (later requests for it
   * answer REPLAY_NOT_FOUND, saying it expired); 600 000 (10 minutes) unless told otherwise.
   */
  replayIdleMs?: number;
  /**
   * How many replays the connection may keep open; replay/open past it answers REPLAY_LIMIT. 100
   * unless told otherwise.
   */
  maxReplays?: number;
  /**
   * How many watches the connection may keep open; session/watch past it answers WATCH_LIMIT.
   * 1 000 unless told otherwise.
   */
  maxWatches?: number;
  /**
   * How many requests may be in flight (read, and their answer not yet written out) before the
   * server stops reading its input until answers go out; 128 unless told otherwise. Reading also
   * stops while the output is not draining. Requests past it are never refused: they wait in
   * the input, unread.
   */
  maxInFlight?: number;
  /**
   * Titles and ACP kinds of tool calls in the session/update notifications of session/load and
   * of watches with `format: "acp"`; the tool name and a kind guessed from it unless given.
   */
  presentTool?: AcpToolPresenter;
}

/** A running server. */
export interface RpcServer {
  /**
   * Resolves once the server has stopped: the input ended (or `close` was called), every request
   * read was answered and the answers were flushed; the output stream is then ended.
   */
  readonly closed: Promise<void>;
  /**
   * Stops reading (later input is ignored), finishes and answers the requests in flight, and
   * resolves like `closed`. For SIGTERM/SIGINT. Idempotent.
   */
  close(): Promise<void>;
  /** How many replays are open now (none once the server has stopped). */
  readonly openReplays: number;
}

/**
 * Serves the method table over `input`/`output` until the input ends or `close` is called.
 * Requests naming the same session (or replay) run in arrival order, others concurrently; a
 * session unused for `idleMs` is unloaded, releasing its writer lock; a replay unused for
 * `replayIdleMs` expires, and at most `maxReplays` are open at once (and `maxWatches` watches). Backpressure: while the
 * output is not draining, or `maxInFlight` requests are in flight, the server reads no more input.
 * The store is left open.
 */
export function serve(options: ServeOptions): RpcServer {
  const log = options.log ?? logToStderr;
  const { store, input, output } = options;
  const framing = options.framing ?? "ndjson";
  const queue = new KeyedQueue();
  const acpOptions = options.presentTool === undefined ? {} : { presentTool: options.presentTool };
  const replays = new OpenReplays({
    queue,
    idleMs: options.replayIdleMs ?? DEFAULT_REPLAY_IDLE_MS,
    max: options.maxReplays ?? DEFAULT_MAX_REPLAYS,
  });
  const idle = new IdleSessions({ store, queue, idleMs: options.idleMs ?? DEFAULT_IDLE_MS, log });
  // The connection is made after the handlers; notifications go through it once it exists.
  let connection: ReturnType<typeof openServerConnection> | undefined;
  const watches = new ConnectionWatches({
    store,
    send: async (params) => connection?.notify(RPC_NOTIFICATION.sessionEvents, params),
    sendUpdate: async (params) => connection?.notify(RPC_NOTIFICATION.sessionUpdate, params),
    ...acpOptions,
    log,
    onDelivery: (sessionId) => idle.touch(sessionId),
    ...(options.watchBufferEvents === undefined ? {} : { bufferEvents: options.watchBufferEvents }),
    ...(options.watchStallMs === undefined ? {} : { stallMs: options.watchStallMs }),
    ...(options.maxWatches === undefined ? {} : { maxWatches: options.maxWatches }),
  });
  const uploads = new ImportUploads();
  const handlers = createHandlers({
    store,
    storeKind: options.storeKind ?? store.backend.kind,
    replays,
    watches,
    uploads,
    sendUpdate: async (params) => connection?.notify(RPC_NOTIFICATION.sessionUpdate, params),
    acpOptions,
  });
  const dispatch = createDispatcher({
    handlers,
    queue,
    log,
    onOrderingKey: (member, value) => idle.noteRequest(member, value),
  });
  const open = openServerConnection({
    input,
    output,
    framing,
    dispatch,
    log,
    ...(options.maxInFlight === undefined ? {} : { maxInFlight: options.maxInFlight }),
  });
  connection = open;
  // A reader that went away (EPIPE) must not crash the process: log it, the input end follows.
  const onOutputError = (error: Error) => log(`output error: ${error.message}`);
  output.on("error", onOutputError);

  let closing: Promise<void> | undefined;
  const shutdown = (): Promise<void> => {
    closing ??= (async () => {
      // Closing the connection stops its watches; the requests in flight are still answered.
      await watches.close();
      await open.drain();
      await idle.stop();
      // The connection is gone: nothing can name its replays any more.
      replays.close();
      uploads.close();
      open.dispose();
      // The error listener stays: a late EPIPE on a finished stream must not crash the process.
      await endOutput(output);
    })();
    return closing;
  };

  let closeRequested: (() => void) | undefined;
  const closed = new Promise<void>((resolve, reject) => {
    open.onClose(() => {
      shutdown().then(resolve, reject);
    });
    closeRequested = () => {
      open.stopReading();
      shutdown().then(resolve, reject);
    };
  });

  open.listen();
  idle.start();
  replays.start();
  uploads.start();
  if ((input as { isTTY?: boolean }).isTTY === true) log(hintLine(options, framing));

  return {
    closed,
    close() {
      closeRequested?.();
      return closed;
    },
    get openReplays() {
      return replays.size;
    },
  };
}

/** The one line a person who started the server in a terminal sees on stderr. */
function hintLine(options: ServeOptions, framing: Framing): string {
  const store = options.storeUrl ?? options.storeKind ?? options.store.backend.kind;
  const example = JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    method: RPC_METHOD.initialize,
    params: { protocolVersion: 1 },
  });
  const how =
    framing === "ndjson"
      ? `type one JSON-RPC 2.0 request per line, e.g. ${example}`
      : "send Content-Length framed JSON-RPC 2.0 messages";
  return `seedline JSON-RPC server on stdio (store ${store}, ${framing} framing): ${how}; end input (Ctrl-D) to stop.`;
}

/** Ends the output once everything written is flushed (a broken stream counts as ended). */
function endOutput(output: NodeJS.WritableStream): Promise<void> {
  const stream = output as NodeJS.WritableStream & {
    writableEnded?: boolean;
    destroyed?: boolean;
  };
  if (stream.writableEnded === true || stream.destroyed === true) return Promise.resolve();
  return new Promise<void>((resolve) => {
    stream.end(() => resolve());
  });
}

function logToStderr(line: string): void {
  process.stderr.write(`${line}\n`);
}
