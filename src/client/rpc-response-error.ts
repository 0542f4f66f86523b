// The errors a SeedlineClient call rejects with: an error response, a connection that closed first, a request too large to send.
// RpcResponseError lives with the SDK's errors, so that `hasCode` and `errorCode` read it too.
export { RpcResponseError, type RpcResponseErrorData } from "../errors.js";

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
