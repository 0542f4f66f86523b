// The SDK's typed errors: one class per concern, each with a literal `code` and structured details.
import type { JsonRpcProtocolErrorData, RpcErrorCode, RpcErrorData } from "./generated.js";

/** A code thrown only in-process: a `Session` object that is not the store's current one. */
export type LocalErrorCode = "SESSION_NOT_LIVE";

/** Every code an SDK error can carry: the wire codes of the error table plus the local ones. */
export type SeedlineErrorCode = RpcErrorCode | LocalErrorCode;

/** The structured details of an error: the error table's `data` without `code`. */
export type ErrorDetails<C extends SeedlineErrorCode> = C extends RpcErrorCode
  ? Omit<RpcErrorData[C], "code">
  : { readonly sessionId: string };

/** The name of a log invariant, as `INVALID_EVENT` reports it. */
export type InvariantRule = RpcErrorData["INVALID_EVENT"]["rule"];

/** One problem an `INVALID_EVENT` lists: where (seq, index, instancePath), the rule, and what was expected and found. */
export type InvalidEventProblem = RpcErrorData["INVALID_EVENT"]["problems"][number];

/**
 * Base of every error the SDK throws on purpose. Match on `code`, never on the message: messages
 * say what was expected and what was found, for people.
 */
export class SeedlineError<C extends SeedlineErrorCode = SeedlineErrorCode> extends Error {
  readonly code: C;
  readonly details: ErrorDetails<C>;

  constructor(code: C, message: string, details: ErrorDetails<C>, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
    this.details = details;
  }
}

/** An event breaks the schema or a log invariant (append, seed, import). */
export class InvalidEventError extends SeedlineError<"INVALID_EVENT"> {
  get rule(): InvariantRule {
    return this.details.rule;
  }
  get seq(): number {
    return this.details.seq;
  }
  get index(): number {
    return this.details.index;
  }
  /**
   * Every problem found in the batch, seed or imported log, the first being the one `rule`,
   * `seq` and `index` name (at most 100; `problemCount` counts them all).
   */
  get problems(): readonly InvalidEventProblem[] {
    return this.details.problems;
  }
  /** How many problems were found in all. */
  get problemCount(): number {
    return this.details.problemCount;
  }
}

/** The codes of `SessionForkError`, in the order the checks run. */
export type ForkErrorCode =
  | "SESSION_ALREADY_EXISTS"
  | "SESSION_NOT_FOUND"
  | "SESSION_NOT_LIVE"
  | "INVALID_BOUNDARY"
  | "OPEN_TURN";

/** A fork was refused; `code` says which check failed. */
export class SessionForkError<C extends ForkErrorCode = ForkErrorCode> extends SeedlineError<C> {}

/** The codes of `StorageError`. */
export type StorageErrorCode =
  | "FORMAT_UNSUPPORTED"
  | "CORRUPT_LOG"
  | "SEQ_CONFLICT"
  | "SESSION_BUSY"
  | "SESSION_NOT_FOUND"
  | "SESSION_ALREADY_EXISTS"
  | "INVALID_PARAMS"
  | "STORAGE_UNAVAILABLE"
  | "STORAGE_REFUSED"
  | "AMBIGUOUS_ID";

/** A store or backend refused an operation, or found its data unreadable. */
export class StorageError<C extends StorageErrorCode = StorageErrorCode> extends SeedlineError<C> {}

/**
 * The store could not be reached, or the connection to it broke during an operation (a database
 * server such as PostgreSQL). The server rolls back a transaction whose connection ends, so
 * nothing of the operation was stored — unless the connection broke while the commit was in
 * flight (`commitUnknown`: a COMMIT, or a statement that is its own transaction, such as a
 * PostgreSQL append of up to 1,000 events, that the server did not answer): then the outcome is
 * unknown, and retrying the same append is safe (an
 * identical retry is acknowledged, a different one is SEQ_CONFLICT). `cause` holds the driver's
 * error.
 */
export class StorageUnavailableError extends StorageError<"STORAGE_UNAVAILABLE"> {
  /** The store: its URL without password, and its schema. */
  get location(): string {
    return this.details.location;
  }
  /** Whether the connection broke while the commit was in flight, so the write may have landed. */
  get commitUnknown(): boolean {
    return this.details.commitUnknown;
  }
}

/** What a storage refusal reports: no space, no permission, or a read-only file system or database. */
export type RefusalCondition = RpcErrorData["STORAGE_REFUSED"]["condition"];

/**
 * The store's file system or database refused the operation for a condition of its own: no space
 * left (`no-space`), no permission (`no-permission`) or a read-only file system or database
 * (`read-only`). Nothing of the operation was stored and the log is intact: free space or fix the
 * permissions, then retry the same request. `cause` holds the system's or driver's error.
 */
export class StorageRefusedError extends StorageError<"STORAGE_REFUSED"> {
  /** What the storage reported. */
  get condition(): RefusalCondition {
    return this.details.condition;
  }
  /** The file or folder (JSONL, SQLite), or the store's URL without password and its schema. */
  get location(): string {
    return this.details.location;
  }
}

/**
 * The codes of `ReplayError`: the replay codes, plus INVALID_PARAMS for overrides that name no
 * session of the tree or do not parse.
 */
export type ReplayErrorCode =
  | "REPLAY_INCOMPLETE"
  | "REPLAY_EXHAUSTED"
  | "REPLAY_UNEXPECTED_SESSION"
  | "REPLAY_NOT_FOUND"
  | "REPLAY_LIMIT"
  | "INVALID_PARAMS";

/** Replay refused to derive or serve a script; `code` says why. */
export class ReplayError<C extends ReplayErrorCode = ReplayErrorCode> extends SeedlineError<C> {}

/**
 * A turn recorder op does not fit where the session's recording stands (chunks with no open step,
 * a step ended before its finish chunk, a result for no pending tool call, …). Nothing of the
 * refused call was stored and the recorder's state is as before it.
 */
export class RecordError extends SeedlineError<"RECORD_REFUSED"> {
  /** What the recording allowed at that point. */
  get expected(): string {
    return this.details.expected;
  }
  /** What the op asked for. */
  get found(): string {
    return this.details.found;
  }
}

/** The `data` of an error response, as the error table describes it (not checked on receipt). */
export type RpcResponseErrorData =
  | RpcErrorData[RpcErrorCode]
  | JsonRpcProtocolErrorData[keyof JsonRpcProtocolErrorData]
  | undefined;

/**
 * An error response from the server, as the typed client rejects with it: `code` the JSON-RPC
 * number, `data.code` the string code of a domain error (match on that, or use {@link hasCode}
 * and {@link errorCode}, which read it), `data` the error's details. It lives beside the SDK's
 * errors so that one set of helpers serves both.
 */
export class RpcResponseError extends Error {
  readonly code: number;
  readonly data: RpcResponseErrorData;

  constructor(code: number, message: string, data: unknown) {
    super(message);
    this.name = "RpcResponseError";
    this.code = code;
    this.data = data as RpcResponseErrorData;
  }

  /** The domain error code (`data.code`), or undefined for a protocol error. */
  get dataCode(): RpcErrorCode | undefined {
    const data = this.data as { code?: unknown } | undefined;
    return typeof data?.code === "string" ? (data.code as RpcErrorCode) : undefined;
  }

  /** The error's details, as an SDK error holds them: `data` without `code` (empty for a protocol error). */
  get details(): object {
    const { code: _code, ...details } = (this.data ?? {}) as { code?: unknown };
    return details;
  }

  /** Whether this is the domain error `code`; narrows `data` to that error's details. */
  is<C extends RpcErrorCode>(
    code: C,
  ): this is RpcResponseError & { readonly data: RpcErrorData[C] } {
    return this.dataCode === code;
  }
}

/**
 * An error that carries the string code `C`: an SDK error thrown in-process, or the typed client's
 * {@link RpcResponseError} whose `data.code` is `C`. Either way `details` holds the error's details.
 */
export type CodedError<C extends SeedlineErrorCode> =
  | SeedlineError<C>
  | (C extends RpcErrorCode
      ? RpcResponseError & { readonly data: RpcErrorData[C]; readonly details: ErrorDetails<C> }
      : never);

/**
 * The string code of `error`: a seedline error's `code`, or the `data.code` of an error response
 * the typed client rejected with; undefined for anything else (a protocol error included).
 */
export function errorCode(error: unknown): SeedlineErrorCode | undefined {
  if (error instanceof SeedlineError) return error.code;
  if (error instanceof RpcResponseError) return error.dataCode;
  return undefined;
}

/**
 * Whether `error` carries the given code: a seedline error thrown in-process (the SDK), or an
 * error response from the server (the typed client's `RpcResponseError`, by its `data.code`).
 */
export function hasCode<C extends SeedlineErrorCode>(
  error: unknown,
  code: C,
): error is CodedError<C> {
  return errorCode(error) === code;
}

/** A short, bounded rendering of a value for error messages. */
export function show(value: unknown): string {
  let text: string;
  try {
    text = typeof value === "bigint" ? `${value}n` : (JSON.stringify(value) ?? String(value));
  } catch {
    text = Object.prototype.toString.call(value);
  }
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}
