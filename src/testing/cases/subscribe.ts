// Contract cases for subscribe: changes by another instance are heard, an unsubscribed callback is not called.

import assert from "node:assert/strict";
import { serializeEvents } from "../../log/serialized-event.js";
import { balancedLog, balancedTurn, header, TURN_LENGTH } from "../events.js";
import { within } from "../expect.js";
import type { CaseRegistry } from "../registry.js";

/** Counts the calls of a subscription and lets a case wait for the next one. */
function listener() {
  let calls = 0;
  let wake: (() => void) | undefined;
  return {
    onChange: () => {
      calls++;
      wake?.();
    },
    get calls() {
      return calls;
    },
    next: () => new Promise<void>((resolve) => (wake = resolve)),
  };
}

/** Registers the subscription cases. */
export function subscribeCases(cases: CaseRegistry): void {
  cases.add(
    "subscribe hears appends, a repair and a delete by another instance",
    async (storage) => {
      const writer = await storage.open();
      const watcher = await storage.open();
      await writer.create(header("watched"), []);
      const heard = listener();
      const stop = watcher.subscribe("watched", heard.onChange);
      try {
        // A backend may call every subscriber once when its feed starts: a first append settles that.
        let next = heard.next();
        await writer.append("watched", 0, serializeEvents(balancedLog(1)));
        await within(next, "a notification of the first append");
        for (const [what, change] of [
          [
            "an append",
            () =>
              writer.append("watched", TURN_LENGTH, serializeEvents(balancedTurn(TURN_LENGTH, 2))),
          ],
          ["a repair", () => writer.repair("watched", TURN_LENGTH, [])],
          ["a delete", async () => void (await writer.delete("watched"))],
        ] as const) {
          next = heard.next();
          await change();
          await within(next, `a notification of ${what}`);
        }
      } finally {
        stop();
      }
    },
  );

  cases.add(
    "subscribe stops calling after unsubscribe (twice is harmless), while other subscriptions go on",
    async (storage) => {
      const writer = await storage.open();
      const watcher = await storage.open();
      await writer.create(header("stopped"), []);
      await writer.create(header("quiet"), []);
      const stopped = listener();
      const quiet = listener();
      const stop = watcher.subscribe("stopped", stopped.onChange);
      const stopQuiet = watcher.subscribe("quiet", quiet.onChange);
      try {
        const first = stopped.next();
        await writer.append("stopped", 0, serializeEvents(balancedLog(1)));
        await within(first, "a notification of the append");
        stop();
        stop();
        const before = stopped.calls;
        const quietBefore = quiet.calls;
        await writer.append("stopped", TURN_LENGTH, serializeEvents(balancedTurn(TURN_LENGTH, 2)));
        // Once the quiet session hears of its own later change, the stopped one had every chance to
        // hear of the earlier one.
        const heard = quiet.next();
        await writer.append("quiet", 0, serializeEvents(balancedLog(1)));
        await within(heard, "a notification of the quiet session's append");
        assert.equal(stopped.calls, before, "expected no call after unsubscribe");
        assert.ok(quiet.calls > quietBefore);
      } finally {
        stopQuiet();
      }
    },
  );
}
