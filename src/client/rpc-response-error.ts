// The errors a SeedlineClient call rejects with: an error response, a connection that closed first, a request too large to send.
import type { JsonRpcProtocolErrorData, RpcErrorCode, RpcErrorData } from "../generated.js";

/** The `data` of an error response, as the error table describes it (not checked on receipt). */
export type RpcResponseErrorData =
  | RpcErrorData[RpcErrorCode]
  | JsonRpcProtocolErrorData[keyof JsonRpcProtocolErrorData]
  | undefined;

/**
 * An error response from the server: `code` the JSON-RPC number, `data.code` the string code of
 * a domain error (match on that), `data` the error's details.
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

  /** Whether this is the domain error `code`; narrows `data` to that error's details. */
  is<C extends RpcErrorCode>(
    code: C,
  ): this is RpcResponseError & { readonly data: RpcErrorData[C] } {
    return this.dataCode === code;
  }
}

/** A request that got no answer because the connection closed (the server exited or was closed). */
export class ConnectionClosedError extends Error {
  constructor(message = "the seedline server closed the connection before answering") {
    super(message);
    this.name = "ConnectionClosedError";
  }
}

/**
 * A request the client refused to send: serialized, it is over the frame limit the server reads
 * (`limit` bytes), so the server could only refuse it. Nothing was written. Send less per request
 * (`sessionImport` splits a large log into parts by itself; append events in smaller batches).
 */
export class RequestTooLargeError extends Error {
  readonly code = "REQUEST_TOO_LARGE" as const;
  readonly method: string;
  readonly limit: number;
  readonly size: number;

  constructor(method: string, size: number, limit: number) {
    super(
      `expected a ${method} request of at most ${limit} bytes (the frame limit), got ${size} bytes; nothing was sent`,
    );
    this.name = "RequestTooLargeError";
    this.method = method;
    this.limit = limit;
    this.size = size;
  }
}
