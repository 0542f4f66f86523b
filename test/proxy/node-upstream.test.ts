// The proxy server's upstream fetch over node:http: answers as fetch gives them, a body readable through its web stream or straight from its socket, and the upstream's failures as errors.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { chunkReaderOf, nodeUpstream } from "../../src/proxy/node-upstream.js";

type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => void;

const servers: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

/** A local server answering each request with `handler`, once its body is read. */
async function serve(handler: Handler): Promise<string> {
  const server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on("data", (part: Buffer) => parts.push(part));
    req.on("end", () => handler(req, res, Buffer.concat(parts).toString("utf8")));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  servers.push({
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** Every chunk `reader` gives, as text. */
async function readAll(reader: ReturnType<typeof chunkReaderOf>): Promise<string> {
  const decoder = new TextDecoder();
  let text = "";
  for (;;) {
    const { done, value } = await reader.read();
    if (done || value === undefined) return text + decoder.decode();
    text += decoder.decode(value, { stream: true });
  }
}

describe("nodeUpstream", () => {
  it("sends the method, headers and body, and answers with the status, headers and body as fetch does", async () => {
    const url = await serve((req, res, body) => {
      res.writeHead(201, { "content-type": "application/json", "x-upstream": "yes" });
      res.end(
        JSON.stringify({ method: req.method, auth: req.headers.authorization ?? null, body }),
      );
    });
    const upstream = nodeUpstream();
    try {
      const response = await upstream.fetch(`${url}/v1/echo`, {
        method: "POST",
        headers: new Headers({ authorization: "Bearer sk-test", "content-type": "text/plain" }),
        body: "héllo",
      });
      expect(response.status).toBe(201);
      expect(response.headers.get("x-upstream")).toBe("yes");
      expect(await response.json()).toEqual({
        method: "POST",
        auth: "Bearer sk-test",
        body: "héllo",
      });
    } finally {
      upstream.close();
    }
  });

  it("gives the body straight from its socket to chunkReaderOf, each piece as it comes, and through the web stream otherwise", async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const url = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write("data: one\n\n");
      void held.then(() => res.end("data: two\n\n"));
    });
    const upstream = nodeUpstream();
    try {
      const streamed = await upstream.fetch(url, { method: "POST", body: "{}" });
      const reader = chunkReaderOf(streamed);
      // The first piece arrives while the upstream still holds the rest: nothing waits for the end.
      const first = await reader.read();
      expect(new TextDecoder().decode(first.value)).toBe("data: one\n\n");
      release();
      expect(await readAll(reader)).toBe("data: two\n\n");
      // The web stream was never read: the body came from the socket alone.
      expect(streamed.bodyUsed).toBe(false);

      const read = await upstream.fetch(url, { method: "POST", body: "{}" });
      expect(await read.text()).toBe("data: one\n\ndata: two\n\n");
    } finally {
      upstream.close();
    }
  });

  it("reads an answer whose web stream was read from that stream, not from the socket again", async () => {
    const url = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "text/plain" });
      res.write("first ");
      setTimeout(() => res.end("second"), 20);
    });
    const upstream = nodeUpstream();
    try {
      const response = await upstream.fetch(url, { method: "POST", body: "{}" });
      const web = (response.body as ReadableStream<Uint8Array>).getReader();
      const first = await web.read();
      expect(new TextDecoder().decode(first.value)).toBe("first ");
      web.releaseLock();
      // The socket's stream is the web stream's now: chunkReaderOf reads the web stream on.
      expect(await readAll(chunkReaderOf(response))).toBe("second");
    } finally {
      upstream.close();
    }
  });

  it("fails with the connection's code when nothing listens, and when the upstream breaks off mid-body", async () => {
    const upstream = nodeUpstream();
    try {
      await expect(
        upstream.fetch("http://127.0.0.1:9/v1", { method: "POST" }),
      ).rejects.toMatchObject({ code: "ECONNREFUSED" });
      const url = await serve((_req, res) => {
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.write("data: partial\n\n");
        setTimeout(() => res.destroy(), 20);
      });
      const response = await upstream.fetch(url, { method: "POST", body: "{}" });
      await expect(readAll(chunkReaderOf(response))).rejects.toMatchObject({ code: "ECONNRESET" });
    } finally {
      upstream.close();
    }
  });

  it("aborts with the caller's signal, before the answer and while its body is read", async () => {
    const url = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write("data: first\n\n");
    });
    const upstream = nodeUpstream();
    try {
      const before = new AbortController();
      before.abort();
      await expect(
        upstream.fetch(url, { method: "POST", body: "{}", signal: before.signal }),
      ).rejects.toMatchObject({ name: "AbortError" });

      const during = new AbortController();
      const response = await upstream.fetch(url, {
        method: "POST",
        body: "{}",
        signal: during.signal,
      });
      const reader = chunkReaderOf(response);
      await reader.read();
      during.abort();
      await expect(readAll(reader)).rejects.toBeDefined();
    } finally {
      upstream.close();
    }
  });

  it("fails with ETIMEDOUT when the upstream sends nothing for its idle timeout", async () => {
    const url = await serve(() => {
      // Never answers.
    });
    const upstream = nodeUpstream({ idleTimeoutMs: 100 });
    try {
      await expect(upstream.fetch(url, { method: "POST", body: "{}" })).rejects.toMatchObject({
        code: "ETIMEDOUT",
      });
    } finally {
      upstream.close();
    }
  });

  it("refuses a body it cannot send and a URL that is not http(s)", async () => {
    const upstream = nodeUpstream();
    try {
      await expect(
        upstream.fetch("http://127.0.0.1:9/v1", { method: "POST", body: new Blob(["x"]) }),
      ).rejects.toThrow(/expected a string or bytes body/);
      await expect(upstream.fetch("ftp://127.0.0.1/v1", { method: "GET" })).rejects.toThrow(
        /expected an http: or https: upstream, got ftp:/,
      );
    } finally {
      upstream.close();
    }
  });
});
