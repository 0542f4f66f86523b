// P2's ceiling: a bare node:http server in a process of its own answering every POST at once with the same recorded SSE body, in one write with its length — what any replaying proxy in another process costs at the least.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { chatStream } from "./proxy-upstream.js";

const events = Number(process.argv[2]);
if (!Number.isInteger(events) || events < 1) throw new Error("usage: answer-child EVENTS");
const body = Buffer.from(chatStream(events).join(""));
const server = createServer((req, res) => {
  const parts: Buffer[] = [];
  req.on("data", (part: Buffer) => parts.push(part));
  req.on("end", () => {
    // As a replaying proxy must: the request read whole and parsed.
    JSON.parse(Buffer.concat(parts).toString("utf8"));
    res.writeHead(200, { "content-type": "text/event-stream", "content-length": body.length });
    res.end(body);
  });
});
server.listen(0, "127.0.0.1", () => {
  process.stdout.write(`http://127.0.0.1:${(server.address() as AddressInfo).port}/v1\n`);
});
// Ends with its input.
process.stdin.resume();
process.stdin.on("end", () => {
  server.closeAllConnections();
  server.close();
});
