// A TCP proxy for fault tests: forwards to a server, and can stop forwarding (a network partition) without closing anything.
import { createConnection, createServer, type Server, type Socket } from "node:net";

/** One proxied connection: the client's socket and the one to the server. */
interface Pipe {
  readonly client: Socket;
  readonly upstream: Socket | undefined;
  /** Bytes read while held, per direction, delivered once healed (as TCP retransmits them). */
  readonly toUpstream: Buffer[];
  readonly toClient: Buffer[];
  /** Stopped on its own (see {@link TcpProxy.blackholePort}). */
  held: boolean;
  /** A side closed while held: the other side is closed on heal. */
  closed: boolean;
}

/**
 * A proxy on 127.0.0.1 (a free port) in front of `host:port`. `blackhole()` stops forwarding
 * both ways on every connection, and holds new ones (accepted, never connected on), closing no
 * socket: to both ends it looks like a network partition. `heal()` delivers what was held and
 * forwards again; connections accepted meanwhile are connected on then.
 */
export class TcpProxy {
  readonly #server: Server;
  readonly #pipes = new Set<Pipe>();
  readonly #waiting: Socket[] = [];
  readonly #host: string;
  readonly #targetPort: number;
  #blackholed = false;
  /** How many connections it accepted. */
  accepted = 0;
  /** What clients sent while recording (see {@link record}). */
  #recorded: Buffer[] | undefined;

  private constructor(server: Server, host: string, port: number) {
    this.#server = server;
    this.#host = host;
    this.#targetPort = port;
    server.on("connection", (socket) => this.#accept(socket));
  }

  /** Starts a proxy in front of `host:port`. */
  static async start(host: string, port: number): Promise<TcpProxy> {
    const server = createServer({ pauseOnConnect: false });
    const proxy = new TcpProxy(server, host, port);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return proxy;
  }

  /** The port clients connect to. */
  get port(): number {
    const address = this.#server.address();
    if (address === null || typeof address === "string") throw new Error("the proxy is closed");
    return address.port;
  }

  /** Stops forwarding on every connection, and connecting on new ones. */
  blackhole(): void {
    this.#blackholed = true;
  }

  /**
   * Stops forwarding on the one connection whose socket to the server has local port `port` (as
   * the server sees it: pg_stat_activity.client_port). Whether one was found.
   */
  blackholePort(port: number): boolean {
    for (const pipe of this.#pipes) {
      if (pipe.upstream?.localPort === port) {
        pipe.held = true;
        return true;
      }
    }
    return false;
  }

  /** Forwards again: what was held is delivered, held connections are connected on. */
  heal(): void {
    this.#blackholed = false;
    for (const pipe of this.#pipes) {
      pipe.held = false;
      this.#flush(pipe);
    }
    for (const socket of this.#waiting.splice(0)) this.#connect(socket);
  }

  /** Closes the proxy and every connection through it. */
  async close(): Promise<void> {
    for (const pipe of this.#pipes) {
      pipe.client.destroy();
      pipe.upstream?.destroy();
    }
    for (const socket of this.#waiting.splice(0)) socket.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  /** Starts keeping what every client sends to the server (the bytes, as they are forwarded). */
  record(): void {
    this.#recorded = [];
  }

  /** What clients sent since {@link record}, as Latin-1 text (SQL texts readable); stops recording. */
  recorded(): string {
    const text = Buffer.concat(this.#recorded ?? []).toString("latin1");
    this.#recorded = undefined;
    return text;
  }

  #accept(socket: Socket): void {
    this.accepted++;
    socket.on("error", () => {});
    if (this.#blackholed) {
      socket.pause();
      this.#waiting.push(socket);
      socket.on("close", () => {
        const at = this.#waiting.indexOf(socket);
        if (at >= 0) this.#waiting.splice(at, 1);
      });
      return;
    }
    this.#connect(socket);
  }

  #connect(client: Socket): void {
    if (client.destroyed) return;
    const upstream = createConnection({ host: this.#host, port: this.#targetPort });
    upstream.on("error", () => {});
    const pipe: Pipe = {
      client,
      upstream,
      toUpstream: [],
      toClient: [],
      held: false,
      closed: false,
    };
    this.#pipes.add(pipe);
    const held = () => this.#blackholed || pipe.held;
    const forward = (to: Socket, queue: Buffer[]) => (chunk: Buffer) => {
      if (held()) queue.push(chunk);
      else to.write(chunk);
    };
    const send = forward(upstream, pipe.toUpstream);
    client.on("data", (chunk: Buffer) => {
      this.#recorded?.push(chunk);
      send(chunk);
    });
    upstream.on("data", forward(client, pipe.toClient));
    const closed = () => {
      if (held()) {
        pipe.closed = true;
        return;
      }
      this.#end(pipe);
    };
    client.on("close", closed);
    upstream.on("close", closed);
    client.resume();
  }

  #flush(pipe: Pipe): void {
    for (const chunk of pipe.toUpstream.splice(0)) pipe.upstream?.write(chunk);
    for (const chunk of pipe.toClient.splice(0)) pipe.client.write(chunk);
    if (pipe.closed) this.#end(pipe);
  }

  #end(pipe: Pipe): void {
    this.#pipes.delete(pipe);
    pipe.client.end();
    pipe.upstream?.end();
    setTimeout(() => {
      pipe.client.destroy();
      pipe.upstream?.destroy();
    }, 100).unref();
  }
}
