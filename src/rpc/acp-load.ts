// session/load: a stored session's history sent as ACP session/update notifications, page by page, at the client's pace.
import type { SessionLoadResult, SessionUpdateParams } from "../generated.js";
import { type AcpUpdateOptions, acpUpdatesOf } from "../log/acp-updates.js";
import type { SessionStore } from "../store/session-store.js";

/** How many notifications may be handed to the transport before the load waits for them to be written. */
const SEND_WINDOW = 64;

/**
 * Sends every ACP update of session `id` through `send`, in log order, then resolves with the seq
 * after the last event read. The log is read one page at a time and the next page only once the
 * notifications of the last one are written (`send` resolves when the transport has written its
 * notification): a client that stops reading holds the load, and memory holds a page and at most
 * {@link SEND_WINDOW} notifications, whatever the log's length.
 * @throws StorageError SESSION_NOT_FOUND and the store's read errors, as `SessionStore.pages`;
 *   whatever `send` rejects with (the client went away).
 */
export async function sendAcpHistory(
  store: SessionStore,
  id: string,
  send: (params: SessionUpdateParams) => Promise<void>,
  options: AcpUpdateOptions = {},
): Promise<SessionLoadResult> {
  let nextSeq = 0;
  let sending: Promise<void>[] = [];
  for await (const page of store.pages(id)) {
    for (const event of page.events) {
      for (const update of acpUpdatesOf(event, options)) {
        sending.push(send({ sessionId: id, update, _meta: { seedline: { seq: event.seq } } }));
        if (sending.length >= SEND_WINDOW) {
          await Promise.all(sending);
          sending = [];
        }
      }
    }
    // Every notification of a page is written before the next page is read.
    await Promise.all(sending);
    sending = [];
    nextSeq = page.nextSeq;
  }
  return { _meta: { seedline: { nextSeq } } };
}
