// Tools for PostgreSQL fault tests: naming a server's connections, finding and terminating them, collecting answers.
import { randomBytes } from "node:crypto";
import { RpcResponseError } from "../../src/client/rpc-response-error.js";
import { POSTGRES_TEST_URL, sql } from "./postgres-harness.js";

/** An application_name no other test (or engineer) uses, so that only our connections are hit. */
export function appName(): string {
  return `seedline_t_${randomBytes(5).toString("hex")}`;
}

/** The store URL of `schema`, through `port` (default: the server's), with extra parameters. */
export function storeUrl(schema: string, app: string, port?: number, extra = ""): string {
  const url = new URL(POSTGRES_TEST_URL);
  if (port !== undefined) url.port = String(port);
  url.searchParams.set("schema", schema);
  url.searchParams.set("application_name", app);
  return `${url.toString()}${extra}`;
}

/** The result of a request, or its domain error code (with data), or "NO ANSWER" for anything else. */
export async function outcome(
  request: Promise<unknown>,
): Promise<{ ok: unknown } | { code: string | undefined; data: Record<string, unknown> }> {
  try {
    return { ok: await request };
  } catch (error) {
    if (error instanceof RpcResponseError) {
      return { code: error.dataCode, data: error.data as unknown as Record<string, unknown> };
    }
    return { code: `NO ANSWER: ${String(error)}`, data: {} };
  }
}

/** Every backend connection of the server whose connections carry `app`. */
export function connectionsOf(app: string) {
  return sql<{ pid: number; port: number }>(
    "SELECT pid, client_port AS port FROM pg_stat_activity WHERE application_name = $1",
    [app],
  );
}

/**
 * Terminates every backend connection carrying `app` (the function in the select list, so that
 * it runs only on the rows the WHERE kept). The pids terminated.
 */
export function terminateAll(app: string) {
  return sql<{ pid: number }>(
    `SELECT pid, pg_terminate_backend(pid) AS done
     FROM pg_stat_activity WHERE application_name = $1`,
    [app],
  );
}
