// Errors of the viewer's HTTP API: one class with a code and a status, and the one mapping from SDK errors to JSON error responses.
import { errorCode } from "../../errors.js";

/** The codes the viewer's API answers besides the SDK's own (SESSION_NOT_FOUND, INVALID_PARAMS, …). */
export type ViewerErrorCode =
  | "INVALID_PARAMS"
  | "NOT_A_FORK"
  | "NOT_FOUND"
  | "METHOD_NOT_ALLOWED"
  | "TOKEN_REQUIRED"
  | "CROSS_ORIGIN"
  | "LIVE_LIMIT";

/** An API request refused with `status`; `code` names why, `message` says expected and found. */
export class HttpError extends Error {
  override readonly name = "HttpError";
  readonly status: number;
  readonly code: ViewerErrorCode;

  constructor(status: number, code: ViewerErrorCode, message: string) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

/** The JSON body of an error response. */
export interface ErrorBody {
  readonly error: { readonly code: string; readonly message: string };
}

/** The HTTP status of each SDK error code the API may meet; any other is a 500. */
const STATUS_OF: Readonly<Record<string, number>> = {
  SESSION_NOT_FOUND: 404,
  INVALID_PARAMS: 400,
  AMBIGUOUS_ID: 400,
  REPLAY_INCOMPLETE: 409,
  SESSION_BUSY: 409,
  SESSION_ALREADY_EXISTS: 409,
  STORAGE_UNAVAILABLE: 503,
};

/** The status and body an error is answered with. */
export function errorResponse(error: unknown): { status: number; body: ErrorBody } {
  if (error instanceof HttpError) {
    return { status: error.status, body: { error: { code: error.code, message: error.message } } };
  }
  const code = errorCode(error);
  const message = error instanceof Error ? error.message : String(error);
  if (code === undefined) return { status: 500, body: { error: { code: "INTERNAL", message } } };
  return { status: STATUS_OF[code] ?? 500, body: { error: { code, message } } };
}

/** A whole-number query parameter: `fallback` when absent, else an integer from `min` to `max`. */
export function intParam(
  url: URL,
  name: string,
  fallback: number,
  min: number,
  max: number,
): number {
  const raw = url.searchParams.get(name);
  if (raw === null || raw === "") return fallback;
  const value = /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw new HttpError(
      400,
      "INVALID_PARAMS",
      `expected ${name} an integer from ${min} to ${max}, got ${JSON.stringify(raw)}`,
    );
  }
  return value;
}

/** A text query parameter, undefined when absent or empty. */
export function textParam(url: URL, name: string): string | undefined {
  const raw = url.searchParams.get(name);
  return raw === null || raw === "" ? undefined : raw;
}
