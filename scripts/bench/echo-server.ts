// B5's floor: a bare JSON-RPC server on vscode-jsonrpc with seedline's NDJSON framing, answering every request at once.
import { createMessageConnection } from "vscode-jsonrpc/node";
import { createFraming } from "../../src/rpc/framing.js";

const transport = createFraming("ndjson", process.stdin, process.stdout);
const connection = createMessageConnection(transport.reader, transport.writer);

// Answers with a result of the shape session/append answers ({nextSeq}), without looking further.
connection.onRequest((_method, params) => {
  const events = (params as { events?: { seq?: number }[] } | undefined)?.events ?? [];
  return { nextSeq: (events[0]?.seq ?? 0) + events.length };
});
connection.onClose(() => process.exit(0));
connection.listen();
