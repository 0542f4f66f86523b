// How long a PostgreSQL store waits for the server: defaults, the URL parameters that change them, and checks.
import { StorageError, show } from "../../errors.js";

/**
 * The bounds on every wait for the server. A server that stops answering (a network partition, a
 * machine gone) fails an operation after at most these, never after TCP's own retransmission
 * timeout (about 15 minutes).
 */
export interface PostgresTimeouts {
  /** Making a connection (TCP, TLS, startup), in ms (0: no bound). URL: `connect_timeout` (seconds, as libpq). */
  readonly connectMs: number;
  /** Delay before TCP keepalive probes on an idle connection, in ms; 0 turns keepalive off. URL: `keepalives_idle` (seconds, as libpq), `keepalives=0`. */
  readonly keepAliveMs: number;
  /** The server cancels a statement running longer, in ms (0: never). URL: `statement_timeout`. */
  readonly statementMs: number;
  /**
   * The client gives up on a statement whose answer has not arrived, in ms, and drops its
   * connection: the bound that holds when the server cannot be reached at all. URL:
   * `query_timeout` (node-postgres's name). Default: statement_timeout + 5 s, so that a slow
   * statement is cancelled by the server first, on a connection that stays usable.
   */
  readonly queryMs: number;
  /** The server ends a connection idle inside a transaction this long, in ms (its locks go with it; 0: never). URL: `idle_in_transaction_session_timeout`. */
  readonly idleInTransactionMs: number;
}

/**
 * The defaults: a connect fails after 10 s (a reachable server answers in milliseconds); keepalive
 * probes an idle connection after 10 s (the writer locks' connection is idle most of the time);
 * the server cancels a statement after 30 s (the longest statement, a 1,000-row insert chunk,
 * takes milliseconds); the client drops a connection whose answer is 35 s late; a transaction
 * left idle 30 s (its client cut off mid-transaction) is ended by the server, releasing its row
 * locks for the other writers of the session.
 */
export const DEFAULT_TIMEOUTS: PostgresTimeouts = {
  connectMs: 10_000,
  keepAliveMs: 10_000,
  statementMs: 30_000,
  queryMs: 35_000,
  idleInTransactionMs: 30_000,
};

/** How much later than the server's statement timeout the client gives up by default. */
const QUERY_MARGIN_MS = 5_000;

/** The URL query parameters read here (and removed before the URL reaches the driver). */
export const TIMEOUT_PARAMETERS = [
  "connect_timeout",
  "keepalives",
  "keepalives_idle",
  "statement_timeout",
  "query_timeout",
  "idle_in_transaction_session_timeout",
] as const;

/**
 * The timeouts a URL's query asks for, over the defaults, then `overrides` (backend options) over
 * both. Removes the parameters it reads from `params`.
 * @throws StorageError INVALID_PARAMS for a value that is not a non-negative number.
 */
export function readTimeouts(
  params: URLSearchParams,
  overrides: Partial<PostgresTimeouts> = {},
): PostgresTimeouts {
  const take = (name: (typeof TIMEOUT_PARAMETERS)[number], unitMs: number) => {
    const text = params.get(name);
    params.delete(name);
    if (text === null) return undefined;
    const value = Number(text);
    if (text.trim() === "" || !Number.isFinite(value) || value < 0) {
      throw invalidTimeout(`expected ${name} to be a number >= 0, got ${show(text)}`);
    }
    return Math.round(value * unitMs);
  };
  const connectMs = take("connect_timeout", 1000);
  const keepalives = take("keepalives", 1);
  const keepAliveMs = take("keepalives_idle", 1000);
  const statementMs = take("statement_timeout", 1);
  const queryMs = take("query_timeout", 1);
  const idleInTransactionMs = take("idle_in_transaction_session_timeout", 1);
  const fromUrl = {
    connectMs: connectMs ?? DEFAULT_TIMEOUTS.connectMs,
    keepAliveMs: keepalives === 0 ? 0 : (keepAliveMs ?? DEFAULT_TIMEOUTS.keepAliveMs),
    statementMs: statementMs ?? DEFAULT_TIMEOUTS.statementMs,
    idleInTransactionMs: idleInTransactionMs ?? DEFAULT_TIMEOUTS.idleInTransactionMs,
  };
  const merged = { ...fromUrl, ...definedOnly(overrides) };
  for (const [name, value] of Object.entries(merged)) {
    if (!Number.isFinite(value) || value < 0) {
      throw invalidTimeout(`expected timeouts.${name} to be a number >= 0, got ${show(value)}`);
    }
  }
  const explicitQuery = overrides.queryMs ?? queryMs;
  const queryDefault = merged.statementMs === 0 ? 0 : merged.statementMs + QUERY_MARGIN_MS;
  return { ...merged, queryMs: explicitQuery ?? queryDefault };
}

function definedOnly(overrides: Partial<PostgresTimeouts>): Partial<PostgresTimeouts> {
  return Object.fromEntries(Object.entries(overrides).filter(([, v]) => v !== undefined));
}

function invalidTimeout(message: string): StorageError<"INVALID_PARAMS"> {
  return new StorageError("INVALID_PARAMS", message, {
    errors: [{ instancePath: "/store", message }],
  });
}
