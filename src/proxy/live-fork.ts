// Auto mode's switch from replay to live: the replayed session forked at the last matched turn boundary, the channel recording into the child.
import type { SessionStore } from "../store/session-store.js";
import type { SessionChannel } from "./session-channel.js";

/**
 * Forks the session `channel` replays at the end of the last turn whose calls all matched — the
 * last `turn/end` before the call `channel.cursor` (the one that diverged), or the log's last
 * `turn/end` for a call past the recording — and switches the channel to recording into the
 * child. With no turn ended before it, the child is a new session naming the replayed one as its
 * parent and inheriting nothing. The replayed session is never written.
 */
export async function forkForLive(
  store: SessionStore,
  channel: SessionChannel,
  now: () => number,
): Promise<void> {
  const points = channel.forkPoints;
  if (points === undefined) throw new TypeError("expected a replaying channel");
  const boundary = points.beforeCall[channel.cursor] ?? points.atEnd;
  const parent = channel.id;
  const child =
    boundary < 0
      ? await store.create({ meta: { parentSession: parent } })
      : await store.openForWriting((await store.fork(parent, { boundary })).id);
  await channel.recordInto(child, now);
}
