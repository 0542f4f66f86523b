// The address a local server command listens on, from its --host and --port options.
import { UsageError } from "./command.js";

/**
 * `--host` (127.0.0.1 unless given) and `--port` (absent: the server picks a free one).
 * @throws UsageError for a port that is not an integer from 0 to 65535, or an empty host.
 */
export function listenAddress(values: { readonly port?: unknown; readonly host?: unknown }): {
  readonly host: string;
  readonly port?: number;
} {
  const { port } = values;
  if (typeof port === "string" && !(/^\d+$/.test(port) && Number(port) <= 65_535)) {
    throw new UsageError(`expected --port an integer from 0 to 65535, got ${JSON.stringify(port)}`);
  }
  const host = typeof values.host === "string" ? values.host : "127.0.0.1";
  if (host === "") throw new UsageError('expected --host an address, got ""');
  return { host, ...(typeof port === "string" ? { port: Number(port) } : {}) };
}
