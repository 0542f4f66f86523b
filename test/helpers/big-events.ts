// Sessions of a few events of several MiB each (big tool outputs, big file reads), for the tests of reads bounded by bytes.
import type { SessionEvent } from "../../src/index.js";
import {
  assistantMessage,
  stepEnd,
  stepStart,
  text,
  toolCall,
  toolResult,
  turnEnd,
  turnStart,
  userMessage,
} from "./builders.js";

export const MiB = 1024 * 1024;

/** The size of one big tool output: 8 MiB, a normal big file read. */
export const BIG_OUTPUT = 8 * MiB;

/** The text of big output `index`: recognisable at both ends, `bytes` long. */
export function bigOutput(index: number, bytes = BIG_OUTPUT): string {
  const head = `output ${index} begins:`;
  const tail = `:output ${index} ends`;
  return (
    head + String.fromCharCode(97 + (index % 26)).repeat(bytes - head.length - tail.length) + tail
  );
}

/**
 * One balanced turn whose steps each call a tool and get a big output back: `count` outputs of
 * `bytes`, two to a step (so that a step alone is past a page's budget).
 */
export function bigOutputTurn(count: number, bytes = BIG_OUTPUT): SessionEvent[] {
  const events: SessionEvent[] = [];
  let seq = 0;
  events.push(turnStart(seq++, 1));
  events.push(userMessage(seq++, "read the big files"));
  for (let step = 1, done = 0; done < count; step++) {
    events.push(stepStart(seq++, 1, step));
    const calls = Math.min(2, count - done);
    const ids = Array.from({ length: calls }, (_, i) => `call-${step}-${i}`);
    events.push(
      assistantMessage(seq++, 1, step, [
        text(`reading ${calls} files`),
        ...ids.map((id) => ({ type: "tool-call" as const, id, name: "read", arguments: "{}" })),
      ]),
    );
    const callSeqs = ids.map((id) => {
      events.push(toolCall(seq, 1, step, id, "read"));
      return seq++;
    });
    ids.forEach((id, i) => {
      events.push(
        toolResult(seq++, 1, step, id, {
          output: bigOutput(done + i, bytes),
          sourceEventSeqs: [callSeqs[i] as number],
        }),
      );
    });
    done += calls;
    events.push(stepEnd(seq++, 1, step));
  }
  events.push(turnEnd(seq++, 1));
  return events;
}
