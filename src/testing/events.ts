// Valid session events for the backend contract: balanced turns, an open turn, and headers.
import { SESSION_FORMAT_VERSION, type SessionEvent, type SessionHeader } from "../generated.js";

/** The `time` of seq 0 in every contract log; seq n is stamped `BASE_TIME + n`. */
export const BASE_TIME = 1_700_000_000_000;

/** The number of events of one {@link balancedTurn}. */
export const TURN_LENGTH = 9;

/** A header of the current format version; `extra` adds `cwd`, `parentSession`, `seedLength`. */
export function header(
  id: string,
  extra: Partial<Omit<SessionHeader, "version" | "id">> = {},
): SessionHeader {
  return { version: SESSION_FORMAT_VERSION, id, createdAt: BASE_TIME, ...extra };
}

/** The first events of turn `turn` from `fromSeq`: turn/start, user/message, step/start, one chunk. */
export function openTurn(fromSeq: number, turn: number): SessionEvent[] {
  const time = (seq: number) => BASE_TIME + seq;
  let seq = fromSeq;
  return [
    {
      type: "turn/start",
      seq,
      time: time(seq++),
      data: { turn, trigger: { kind: "message", source: { kind: "user" } } },
    },
    {
      type: "user/message",
      seq,
      time: time(seq++),
      data: { content: [{ type: "text", text: `prompt ${turn}` }], source: { kind: "user" } },
      surfaceOp: "append",
    },
    { type: "step/start", seq, time: time(seq++), data: { turn, step: 1 } },
    {
      type: "assistant/chunk",
      seq,
      time: time(seq++),
      data: { turn, step: 1, chunk: { type: "text-delta", index: 0, text: "…" } },
    },
  ];
}

/**
 * A balanced turn of {@link TURN_LENGTH} events from `fromSeq`: {@link openTurn}, then
 * assistant/message (with a tool-call block), tool/call, tool/result, step/end, turn/end.
 */
export function balancedTurn(fromSeq: number, turn: number): SessionEvent[] {
  const time = (seq: number) => BASE_TIME + seq;
  const callId = `call-${turn}`;
  let seq = fromSeq + 4;
  const chunkSeq = fromSeq + 3;
  const callSeq = fromSeq + 5;
  return [
    ...openTurn(fromSeq, turn),
    {
      type: "assistant/message",
      seq,
      time: time(seq++),
      data: {
        turn,
        step: 1,
        content: [
          { type: "text", text: `answer ${turn}` },
          { type: "tool-call", id: callId, name: "bash", arguments: "{}" },
        ],
      },
      sourceEventSeqs: [chunkSeq],
      surfaceOp: "append",
    },
    {
      type: "tool/call",
      seq,
      time: time(seq++),
      data: { turn, step: 1, callId, name: "bash", arguments: "{}" },
    },
    {
      type: "tool/result",
      seq,
      time: time(seq++),
      data: { turn, step: 1, callId, content: [{ type: "text", text: "ok" }], isError: false },
      sourceEventSeqs: [callSeq],
      surfaceOp: "append",
    },
    { type: "step/end", seq, time: time(seq++), data: { turn, step: 1 } },
    { type: "turn/end", seq, time: time(seq++), data: { turn, reason: { kind: "completed" } } },
  ];
}

/** `count` balanced turns from seq 0 (turns 1…count). */
export function balancedLog(count: number): SessionEvent[] {
  const events: SessionEvent[] = [];
  for (let turn = 1; turn <= count; turn++) events.push(...balancedTurn(events.length, turn));
  return events;
}

/**
 * What closes the {@link openTurn} that started at `openedAt`, as crash repair would: step/end,
 * then turn/end interrupted, stamped with the time of the open turn's last event.
 */
export function closers(openedAt: number, turn: number): SessionEvent[] {
  const seq = openedAt + 4;
  const time = BASE_TIME + seq - 1;
  return [
    { type: "step/end", seq, time, data: { turn, step: 1 } },
    { type: "turn/end", seq: seq + 1, time, data: { turn, reason: { kind: "interrupted" } } },
  ];
}
