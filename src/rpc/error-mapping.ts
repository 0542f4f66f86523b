// The one place where errors become JSON-RPC error responses: domain codes, protocol errors, and INTERNAL for bugs.
import { ResponseError } from "vscode-jsonrpc";
import { SeedlineError } from "../errors.js";
import {
  isRpcErrorCode,
  JSONRPC_PROTOCOL_ERRORS,
  type JsonRpcProtocolError,
  type JsonRpcProtocolErrorData,
  RPC_ERROR_CODES,
  type RpcErrorCode,
  type RpcErrorData,
} from "../generated.js";

/** The `data` of a protocol error: its entry in the error table, or none. */
export type ProtocolErrorData<N extends JsonRpcProtocolError> =
  N extends keyof JsonRpcProtocolErrorData ? JsonRpcProtocolErrorData[N] : undefined;

/** The `data` member of any error response this server sends. */
export type WireErrorData =
  | RpcErrorData[RpcErrorCode]
  | JsonRpcProtocolErrorData[keyof JsonRpcProtocolErrorData]
  | undefined;

/**
 * A JSON-RPC protocol error (parse error, invalid request, method not found): the request never
 * reached a method, so it carries no `data.code`.
 */
export class ProtocolError<N extends JsonRpcProtocolError = JsonRpcProtocolError> extends Error {
  readonly kind: N;
  readonly data: ProtocolErrorData<N>;

  constructor(kind: N, message: string, data: ProtocolErrorData<N>) {
    super(message);
    this.name = "ProtocolError";
    this.kind = kind;
    this.data = data;
  }
}

/** The message of every INTERNAL response: fixed, so nothing about the failure reaches the client. */
export const INTERNAL_MESSAGE =
  "internal error: the server failed unexpectedly (details are in its log)";

/**
 * Maps anything a request can fail with to its error response:
 * - a {@link ProtocolError} → its protocol code, message and data (if any);
 * - a `SeedlineError` whose code is in the error table → `{code: RPC_ERROR_CODES[code], message,
 *   data: {code, ...details}}`;
 * - anything else (a bug, a local-only code, a non-Error) → INTERNAL with
 *   {@link INTERNAL_MESSAGE} and `data: {code: "INTERNAL"}`; the details (stack included) go to
 *   `log`, never to the client.
 */
export function toResponseError(
  error: unknown,
  log: (line: string) => void = logToStderr,
): ResponseError<WireErrorData> {
  if (error instanceof ProtocolError) {
    return new ResponseError<WireErrorData>(
      JSONRPC_PROTOCOL_ERRORS[error.kind as JsonRpcProtocolError],
      error.message,
      error.data,
    );
  }
  if (error instanceof SeedlineError && isRpcErrorCode(error.code) && error.code !== "INTERNAL") {
    const data = { code: error.code, ...error.details } as RpcErrorData[RpcErrorCode];
    return new ResponseError<WireErrorData>(RPC_ERROR_CODES[error.code], error.message, data);
  }
  log(`internal error: ${describe(error)}`);
  return new ResponseError<WireErrorData>(RPC_ERROR_CODES.INTERNAL, INTERNAL_MESSAGE, {
    code: "INTERNAL",
  });
}

function describe(error: unknown): string {
  if (error instanceof Error) return error.stack ?? `${error.name}: ${error.message}`;
  try {
    return `non-Error thrown: ${JSON.stringify(error)}`;
  } catch {
    return `non-Error thrown: ${String(error)}`;
  }
}

function logToStderr(line: string): void {
  process.stderr.write(`${line}\n`);
}
