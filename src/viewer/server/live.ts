// The live stream of a session's view items: server-sent events fed by SessionStore.watch, whichever process appends.
import type { ServerResponse } from "node:http";
import { hasCode } from "../../errors.js";
import type { SessionStore } from "../../store/session-store.js";
import { ViewItemBuilder } from "../../view/view-items.js";
import { answersEarlierCalls, pendingCallsAt } from "./pending-calls-at.js";
import { SECURITY_HEADERS } from "./security.js";

/** How often a quiet stream sends a comment, so proxies and the browser keep it open. */
const PING_MS = 15_000;

/**
 * Streams a session's view items from `fromSeq` to `res` as `event: items` messages
 * (`{ items, nextSeq }`), one per batch the watch delivers, until the client goes away or `stop`
 * aborts (`event: end` `{reason: "closed"}`), or the session is deleted (`{reason: "deleted"}`).
 * The response head is written only once the watch is set up: a session that is not there is
 * thrown (StorageError SESSION_NOT_FOUND) for the caller to answer as JSON.
 */
export async function streamLive(
  store: SessionStore,
  id: string,
  fromSeq: number,
  res: ServerResponse,
  stop: AbortSignal,
): Promise<void> {
  const gone = new AbortController();
  const onStop = () => gone.abort();
  stop.addEventListener("abort", onStop);
  res.on("close", onStop);
  const watch = store.watch(id, { fromSeq, signal: gone.signal });
  let ping: NodeJS.Timeout | undefined;
  try {
    const { header } = await watch.ready;
    res.writeHead(200, {
      ...SECURITY_HEADERS,
      "Content-Type": "text/event-stream; charset=utf-8",
      "Cache-Control": "no-store",
      Connection: "keep-alive",
    });
    res.write(": seedline live\n\n");
    ping = setInterval(() => res.write(": ping\n\n"), PING_MS);
    let builder: ViewItemBuilder | undefined;
    for await (const batch of watch) {
      if (batch.events.length > 0) {
        // The first batch may answer calls of a step that began before `fromSeq`.
        builder ??= new ViewItemBuilder(
          header,
          fromSeq > 0 && answersEarlierCalls(batch.events)
            ? { pendingCalls: await pendingCallsAt(store, id, fromSeq) }
            : {},
        );
        const items = [...builder.add(batch.events), ...builder.flush()];
        send(res, "items", { items, nextSeq: batch.nextSeq });
      }
      if (batch.deleted === true) {
        send(res, "end", { reason: "deleted" });
        return;
      }
    }
    if (!res.destroyed) send(res, "end", { reason: "closed" });
  } catch (error) {
    if (!res.headersSent) throw error;
    // The head went out: the stream can only say it ended.
    const reason = hasCode(error, "SESSION_NOT_FOUND") ? "deleted" : "error";
    if (!res.destroyed) send(res, "end", { reason });
  } finally {
    if (ping !== undefined) clearInterval(ping);
    stop.removeEventListener("abort", onStop);
    await watch.return();
    if (res.headersSent) res.end();
  }
}

function send(res: ServerResponse, event: string, data: unknown): void {
  res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}
