// The one generic request handler: looks the method up in the generated table, validates params, orders, runs, maps errors.

import type { ErrorObject } from "ajv";
import type { ResponseError } from "vscode-jsonrpc";
import { SeedlineError } from "../errors.js";
import {
  isRpcMethodName,
  RPC_METHODS,
  type RpcMethodName,
  type RpcMethodSpec,
} from "../generated.js";
import type { KeyedQueue } from "../util/keyed-queue.js";
import { problemText, schemaProblems } from "../util/schema-problem.js";
import { ProtocolError, toResponseError, type WireErrorData } from "./error-mapping.js";
import type { MethodHandlers } from "./handlers.js";
import { orderingKeyOf } from "./ordering.js";

/** Answers one request: its result, or the error response to send. Never rejects. */
export type Dispatch = (method: string, params: unknown) => Promise<unknown>;

/** What a dispatcher needs. */
export interface DispatchOptions {
  readonly handlers: MethodHandlers;
  /** Orders requests that name the same session or replay. */
  readonly queue: KeyedQueue;
  /** Called with each ordering key member and value a request names, before it is queued. */
  readonly onOrderingKey?: (member: string, value: string) => void;
  /** Where INTERNAL details go. */
  readonly log: (line: string) => void;
}

/** The method table, seen through its contract: each entry is the spec of its own method. */
const SPECS: { readonly [M in RpcMethodName]: RpcMethodSpec<M> } = RPC_METHODS;

/**
 * The dispatcher of a server. For each request: an unknown method is METHOD_NOT_FOUND with
 * `data: {method}`; absent params count as `{}`; params the method's generated validator rejects
 * are INVALID_PARAMS listing `{instancePath, message}`; otherwise the handler runs, after every
 * earlier request that named the same value of the method's `orderingKey` (methods without one,
 * and requests that leave it out, are not queued). Whatever the handler throws becomes an error
 * response through {@link toResponseError}; nothing is thrown to the connection.
 */
export function createDispatcher(options: DispatchOptions): Dispatch {
  const { handlers, queue, onOrderingKey, log } = options;

  const invoke = async <M extends RpcMethodName>(method: M, raw: unknown): Promise<unknown> => {
    const spec = SPECS[method];
    const params = raw ?? {};
    if (!spec.validateParams(params)) {
      return toResponseError(invalidParams(method, spec.validateParams.errors), log);
    }
    const member = spec.orderingKey;
    const value = member === undefined ? undefined : params[member];
    let key: string | undefined;
    if (member !== undefined && typeof value === "string") {
      onOrderingKey?.(member, value);
      key = orderingKeyOf(member, value);
    }
    const handler = handlers[method];
    return queue
      .run(key, () => handler(params))
      .catch((error: unknown): ResponseError<WireErrorData> => toResponseError(error, log));
  };

  return async (method, params) => {
    if (!isRpcMethodName(method)) {
      return toResponseError(
        new ProtocolError(
          "METHOD_NOT_FOUND",
          `expected a seedline method, got ${JSON.stringify(method)}`,
          {
            method,
          },
        ),
        log,
      );
    }
    try {
      return await invoke(method, params);
    } catch (error) {
      return toResponseError(error, log);
    }
  };
}

/** INVALID_PARAMS from a validator's errors (ajv stops at the first, so usually one). */
function invalidParams(
  method: string,
  errors: readonly ErrorObject[] | null | undefined,
): SeedlineError<"INVALID_PARAMS"> {
  const list = schemaProblems(errors);
  return new SeedlineError(
    "INVALID_PARAMS",
    `expected params of ${method} that match its schema, got: ${problemText(list[0])}`,
    { errors: list },
  );
}

/** The offending name ajv keeps in `params` for the keywords whose message leaves it out. */
