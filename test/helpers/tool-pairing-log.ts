// A log whose agent uses the call id `call_1` in every step, with a different tool each time: what pairing a tool result with its call must get right.
import type { SessionEvent, SessionHeader } from "../../src/index.js";
import {
  assistantChunk,
  assistantMessage,
  stepEnd,
  stepStart,
  TIME,
  text,
  toolCall,
  toolResult,
  turnEnd,
  turnStart,
  userMessage,
} from "./builders.js";

/** The call id every step uses. */
export const CALL_ID = "call_1";

/** Each call of the log: its tool, arguments, output, and where it stands. */
export interface PairedCall {
  readonly turn: number;
  readonly step: number;
  readonly name: string;
  readonly arguments: string;
  readonly output: string;
  /** The seqs of the call and of its result. */
  readonly callSeq: number;
  readonly resultSeq: number;
}

/** The pairing log: its events, the calls it makes, and the result that answers no call. */
export interface PairingLog {
  readonly header: SessionHeader;
  readonly events: SessionEvent[];
  readonly calls: readonly PairedCall[];
  /** A synthetic interrupted result (turn 3) with the same call id: it answers no call of its step. */
  readonly orphanSeq: number;
  /** The log as JSONL: its header line, then one line per event. */
  readonly jsonl: string;
}

/** The orphan result's text. */
export const ORPHAN_TEXT = "interrupted before the call was recorded";

/**
 * Turn 1: step 1 calls `list_files` and step 2 `grep`; turn 2's step calls `read_file`; each as
 * `call_1`, each answered. Turn 3's step holds only an interrupted result naming `call_1`, which
 * answers no call (none is pending in its step). `chunks` streamed text deltas stand before turn
 * 2's call (to put a page edge between that call and its result).
 */
export function pairingLog(id: string, chunks = 0): PairingLog {
  const events: SessionEvent[] = [];
  const calls: PairedCall[] = [];
  const next = () => events.length;
  const call = (turn: number, step: number, name: string, args: string, output: string) => {
    const callSeq = next();
    events.push(toolCall(callSeq, turn, step, CALL_ID, name, args));
    const resultSeq = next();
    events.push(toolResult(resultSeq, turn, step, CALL_ID, { output, sourceEventSeqs: [callSeq] }));
    calls.push({ turn, step, name, arguments: args, output, callSeq, resultSeq });
  };
  const add = (...make: ((seq: number) => SessionEvent)[]) => {
    for (const m of make) events.push(m(next()));
  };
  add(
    (s) => turnStart(s, 1),
    (s) => userMessage(s, "Which files are here, and their TODOs?"),
    (s) => stepStart(s, 1, 1),
    (s) => assistantMessage(s, 1, 1, [text("Listing.")]),
  );
  call(1, 1, "list_files", '{"path":"."}', "notes.txt\nplan.md");
  add(
    (s) => stepEnd(s, 1, 1),
    (s) => stepStart(s, 1, 2),
    (s) => assistantMessage(s, 1, 2, [text("Searching.")]),
  );
  call(1, 2, "grep", '{"pattern":"TODO"}', "plan.md:3: TODO ship");
  add(
    (s) => stepEnd(s, 1, 2),
    (s) => turnEnd(s, 1),
    (s) => turnStart(s, 2),
    (s) => userMessage(s, "What does notes.txt say?"),
    (s) => stepStart(s, 2, 1),
  );
  for (let i = 0; i < chunks; i++) {
    add((s) => assistantChunk(s, 2, 1, { type: "text-delta", index: 0, text: "r" }));
  }
  add((s) => assistantMessage(s, 2, 1, [text("Reading it.")]));
  call(2, 1, "read_file", '{"path":"notes.txt"}', "Water the plants.");
  add(
    (s) => stepEnd(s, 2, 1),
    (s) => turnEnd(s, 2),
    (s) => turnStart(s, 3),
    (s) => userMessage(s, "Go on."),
    (s) => stepStart(s, 3, 1),
  );
  const orphanSeq = next();
  events.push(
    toolResult(orphanSeq, 3, 1, CALL_ID, {
      output: ORPHAN_TEXT,
      isError: true,
      error: { name: "InterruptedError", code: "interrupted" },
    }),
  );
  add(
    (s) => stepEnd(s, 3, 1),
    (s) => turnEnd(s, 3),
  );
  const header: SessionHeader = { version: 0, id, createdAt: TIME };
  const lines = [{ type: "session", ...header }, ...events].map((line) => JSON.stringify(line));
  const jsonl = `${lines.join("\n")}\n`;
  return { header, events, calls, orphanSeq, jsonl };
}
