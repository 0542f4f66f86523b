// SeedlineClient: the typed client of `seedline serve`, over a spawned server process or any stream pair.
import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { join } from "node:path";
import {
  ConnectionError,
  createMessageConnection,
  ErrorCodes,
  type Logger,
  type MessageConnection,
  ResponseError,
} from "vscode-jsonrpc/node";
// The typed method layer (RpcClientMethods) is generated from the method table (scripts/render-rpc.ts).
import {
  RPC_METHOD,
  RPC_NOTIFICATION,
  RpcClientMethods,
  type RpcMethodName,
  type RpcMethods,
  type SessionEventsParams,
  type SessionExportParams,
  type SessionExportResult,
  type SessionImported,
  type SessionImportParams,
  type SessionImportResult,
  type SessionImportStaged,
  type TranscriptImported,
} from "../generated.js";
import { jsonBytes, MAX_MESSAGE_BYTES, PAGE_BYTES } from "../rpc/frame-limit.js";
import { createFraming, type Framing } from "../rpc/framing.js";
import { packageInfo } from "../rpc/package-info.js";
import { type ClientWatch, ClientWatches, type ClientWatchOptions } from "./client-watches.js";
import { logParts } from "./log-parts.js";
import {
  ConnectionClosedError,
  RequestTooLargeError,
  RpcResponseError,
} from "./rpc-response-error.js";

/** How `SeedlineClient.spawn` starts a server. */
export interface SpawnOptions {
  /**
   * The program to run; by default this Node binary on the package's built CLI
   * (`dist/src/cli/main.js serve`), or on `dist/src/rpc/stdio-main.js` where there is no CLI.
   */
  readonly command?: string;
  /**
   * Arguments: with `command`, exactly these; without, appended to the default server's
   * (after the `--store`/`--framing` this client adds).
   */
  readonly args?: readonly string[];
  /** The framing both sides use; "ndjson" unless told otherwise. */
  readonly framing?: Framing;
  /** The store URL for the default server (`--store`); the server's default otherwise. */
  readonly store?: string;
  readonly cwd?: string;
  readonly env?: NodeJS.ProcessEnv;
  /** What happens to the server's stderr (its log): shown ("inherit", the default), piped or dropped. */
  readonly stderr?: "inherit" | "pipe" | "ignore";
}

/** How `SeedlineClient.connect` talks over a stream pair. */
export interface ConnectOptions {
  readonly framing?: Framing;
}

/** How a spawned server ended. */
export interface ServerExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  /** Set when the process could not be started. */
  readonly error?: Error;
}

/**
 * The typed client: one method per RPC method (`sessionCreate`, `sessionAppend`, …, from the
 * generated `RpcClientMethods`). A call resolves with the result, or rejects with an
 * {@link RpcResponseError} for an error response (match on `error.dataCode`) or a
 * {@link ConnectionClosedError} when the server went away first.
 */
export class SeedlineClient extends RpcClientMethods {
  readonly #connection: MessageConnection;
  readonly #output: NodeJS.WritableStream;
  readonly #connectionClosed: Promise<void>;
  readonly #watches = new ClientWatches();
  #closing: Promise<void> | undefined;
  /** The spawned server process (undefined for `connect`). */
  readonly process: ChildProcess | undefined;
  /** Resolves when the spawned server exits (undefined for `connect`). */
  readonly exited: Promise<ServerExit> | undefined;

  private constructor(
    input: NodeJS.ReadableStream,
    output: NodeJS.WritableStream,
    framing: Framing,
    child?: ChildProcess,
  ) {
    super();
    const transport = createFraming(framing, input, output);
    this.#connection = createMessageConnection(transport.reader, transport.writer, SILENT);
    this.#output = output;
    this.#connection.onNotification(RPC_NOTIFICATION.sessionEvents, (params: SessionEventsParams) =>
      this.#watches.deliver(params),
    );
    this.#connectionClosed = new Promise<void>((resolve) => {
      this.#connection.onClose(() => {
        // Rejects the requests still waiting: no answer can come any more.
        this.#watches.close();
        this.#connection.dispose();
        resolve();
      });
    });
    this.process = child;
    this.exited =
      child === undefined
        ? undefined
        : new Promise<ServerExit>((resolve) => {
            child.once("error", (error) => resolve({ code: null, signal: null, error }));
            child.once("exit", (code, signal) => resolve({ code, signal }));
          });
    this.#connection.listen();
  }

  /**
   * Starts a server process and connects to its stdio. Without `command`, runs this package's
   * built server (`node dist/src/cli/main.js serve`, or `dist/src/rpc/stdio-main.js` before the
   * CLI is built) with `--store` and `--framing` from the options.
   */
  static spawn(options: SpawnOptions = {}): SeedlineClient {
    const framing = options.framing ?? "ndjson";
    const command = options.command ?? process.execPath;
    const args =
      options.command !== undefined
        ? [...(options.args ?? [])]
        : [
            ...serverEntry(packageInfo().root),
            ...(options.store === undefined ? [] : ["--store", options.store]),
            ...(framing === "ndjson" ? [] : ["--framing", framing]),
            ...(options.args ?? []),
          ];
    const child = spawn(command, args, {
      stdio: ["pipe", "pipe", options.stderr ?? "inherit"],
      ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
      ...(options.env === undefined ? {} : { env: options.env }),
    });
    const { stdin, stdout } = child;
    if (stdin === null || stdout === null) throw new Error("expected piped stdio from spawn");
    // Write failures reach the pending request; the stream's own error event must not crash us.
    stdin.on("error", () => {});
    return new SeedlineClient(stdout, stdin, framing, child);
  }

  /**
   * A client over any stream pair: `input` carries the server's messages to us (its stdout),
   * `output` carries ours to it (its stdin).
   */
  static connect(
    input: NodeJS.ReadableStream,
    output: NodeJS.WritableStream,
    options: ConnectOptions = {},
  ): SeedlineClient {
    return new SeedlineClient(input, output, options.framing ?? "ndjson");
  }

  /**
   * Sends one request and waits for its answer.
   * @throws RequestTooLargeError REQUEST_TOO_LARGE, before anything is written, when the request
   *   is over the frame limit ({@link MAX_MESSAGE_BYTES}); RpcResponseError; ConnectionClosedError.
   */
  protected async request<M extends RpcMethodName>(
    method: M,
    params: RpcMethods[M]["params"],
  ): Promise<RpcMethods[M]["result"]> {
    const size = requestBytes(method, params);
    if (size > MAX_MESSAGE_BYTES) throw new RequestTooLargeError(method, size, MAX_MESSAGE_BYTES);
    try {
      return await this.#connection.sendRequest<RpcMethods[M]["result"]>(method, params);
    } catch (error) {
      throw clientError(error);
    }
  }

  /**
   * Exports a session as its JSONL text. Without `fromSeq` the whole log, fetched in parts that
   * each fit the frame limit (session/export with fromSeq 0, then each part's nextSeq until done)
   * and joined; with `fromSeq`, that one part as the server answers it.
   * @throws RpcResponseError SESSION_NOT_FOUND, RESPONSE_TOO_LARGE (one event line alone over the
   *   limit), the storage errors; ConnectionClosedError.
   */
  override async sessionExport(params: SessionExportParams): Promise<SessionExportResult> {
    if (params.fromSeq !== undefined) return super.sessionExport(params);
    const parts: string[] = [];
    let fromSeq = 0;
    for (;;) {
      const part = await super.sessionExport({ ...params, fromSeq });
      parts.push(part.log);
      if (part.done) return { log: parts.join(""), nextSeq: part.nextSeq, done: true };
      if (part.nextSeq <= fromSeq) {
        throw new Error(
          `expected an export part to move past seq ${fromSeq}, got nextSeq ${part.nextSeq}`,
        );
      }
      fromSeq = part.nextSeq;
    }
  }

  /**
   * Imports a JSONL log text, or with `format` another tool's transcript (answered with what
   * became of each session it maps to). A request over the frame limit is sent in parts by itself
   * (cut at line ends into parts of at most {@link PAGE_BYTES}, under a fresh importId, every part
   * but the last with `more: true`); the server imports at once when the last arrives.
   * With `importId` or `more: true` given, sends exactly that part.
   * @throws RpcResponseError INVALID_PARAMS, SESSION_ALREADY_EXISTS, CORRUPT_LOG, INVALID_EVENT,
   *   FORMAT_UNSUPPORTED, the storage errors; ConnectionClosedError.
   */
  override sessionImport(
    params: SessionImportParams & { readonly more: true },
  ): Promise<SessionImportStaged>;
  override sessionImport(
    params: SessionImportParams & {
      readonly format: "claude-code" | "codex" | "auto";
      readonly more?: false;
    },
  ): Promise<TranscriptImported>;
  override sessionImport(
    params: SessionImportParams & { readonly more?: false },
  ): Promise<SessionImported>;
  override sessionImport(params: SessionImportParams): Promise<SessionImportResult>;
  override async sessionImport(params: SessionImportParams): Promise<SessionImportResult> {
    const partsAsked = params.importId !== undefined || params.more === true;
    if (partsAsked || requestBytes(RPC_METHOD.sessionImport, params) <= MAX_MESSAGE_BYTES) {
      return super.sessionImport(params);
    }
    const { log, ...rest } = params;
    const parts = logParts(log, PAGE_BYTES);
    const importId = randomUUID();
    for (const part of parts.slice(0, -1)) {
      await super.sessionImport({ log: part, importId, more: true });
    }
    return super.sessionImport({ ...rest, log: parts.at(-1) ?? "", importId });
  }

  /**
   * Watches a session: an async iterator of event batches, each event exactly once and in seq
   * order from `fromSeq` (default: the end when the server answers) on, whichever process appends
   * them (`session/watch` and its `session/events` notifications). Breaking out of a `for await`,
   * `return()` or aborting `signal` sends `session/unwatch`. A batch with `deleted` ends it when
   * the session is deleted; a watch the server ends (WATCH_OVERFLOW, a storage error) rejects
   * with {@link RpcResponseError}; `ready` rejects with the answer's error (SESSION_NOT_FOUND).
   */
  watch(sessionId: string, options: ClientWatchOptions = {}): ClientWatch {
    return this.#watches.open(
      {
        watch: (params) => this.sessionWatch(params),
        unwatch: async (watchId) => {
          await this.sessionUnwatch({ watchId });
        },
      },
      sessionId,
      options,
    );
  }

  /**
   * Ends the server's input and waits until it has answered what was in flight and closed its
   * output (and, for a spawned server, until the process exits). Idempotent.
   */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      this.#output.end();
      await this.#connectionClosed;
      if (this.exited !== undefined) await this.exited;
      this.#connection.dispose();
    })();
    return this.#closing;
  }
}

/**
 * The server entry of a package root: the built CLI's `serve` when it exists, else the bare
 * stdio entry (both under dist/).
 */
export function serverEntry(root: string): string[] {
  const cli = join(root, "dist", "src", "cli", "main.js");
  if (existsSync(cli)) return [cli, "serve"];
  return [join(root, "dist", "src", "rpc", "stdio-main.js")];
}

/** vscode-jsonrpc's own codes for a request that failed locally, without a server answer. */
const LOCAL_FAILURES: ReadonlySet<number> = new Set([
  ErrorCodes.PendingResponseRejected,
  ErrorCodes.MessageWriteError,
  ErrorCodes.ConnectionInactive,
]);

/** How many bytes `method` with `params` takes as a request message, at most. */
function requestBytes(method: string, params: unknown): number {
  // The id is a counter; the largest safe integer bounds its length.
  return jsonBytes({ jsonrpc: "2.0", id: Number.MAX_SAFE_INTEGER, method, params });
}

function clientError(error: unknown): unknown {
  if (error instanceof ResponseError) {
    if (LOCAL_FAILURES.has(error.code)) return new ConnectionClosedError();
    return new RpcResponseError(error.code, error.message, error.data);
  }
  if (error instanceof ConnectionError) return new ConnectionClosedError(error.message);
  return error;
}

const SILENT: Logger = { error: () => {}, warn: () => {}, info: () => {}, log: () => {} };
