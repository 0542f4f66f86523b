// Contract cases for subscribe: changes by another instance are heard, for the watched id only, an unsubscribed callback is not called.

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

  cases.add(
    "subscribe tells of appends and deletes by any instance, for the watched id only, until unsubscribed",
    async (storage) => {
      const writer = await storage.open();
      const watcher = await storage.open();
      await writer.create(header("w", { createdAt: 1 }), []);
      await writer.create(header("quiet", { createdAt: 1 }), []);
      const turn = balancedTurn(0, 1);
      const calls: string[] = [];
      let wake: (() => void) | undefined;
      const next = () => new Promise<void>((resolve) => (wake = resolve));
      const stopW = watcher.subscribe("w", () => {
        calls.push("w");
        wake?.();
      });
      const stopQuiet = watcher.subscribe("quiet", () => calls.push("quiet"));
      try {
        // A backend may tell every subscriber once when its feed starts (it cannot know what
        // changed before): count from the first notification of a real change on.
        let seen = next();
        await writer.append("w", 0, serializeEvents(turn.slice(0, 3)));
        await within(seen, "a notification of the first append");
        calls.length = 0;
        seen = next();
        await writer.append("w", 3, serializeEvents(turn.slice(3)));
        await within(seen, "a notification of the append");
        seen = next();
        await writer.delete("w");
        await within(seen, "a notification of the delete");
        assert.deepStrictEqual(
          calls.filter((c) => c === "quiet"),
          [],
          "expected no call for the quiet id",
        );
        stopW();
        const before = calls.length;
        await writer.create(header("w", { createdAt: 2 }), serializeEvents(turn));
        // The quiet id is still watched: once it hears of its own change, the stopped one had
        // every chance to hear of the earlier one.
        const quietSeen = new Promise<void>((resolve) => {
          const stop = watcher.subscribe("quiet", () => {
            stop();
            resolve();
          });
        });
        await writer.append("quiet", 0, serializeEvents(turn));
        await within(quietSeen, "a notification of the quiet id's append");
        assert.deepStrictEqual(
          calls.slice(before).filter((c) => c === "w"),
          [],
          "expected no call after unsubscribe",
        );
      } finally {
        stopW();
        stopQuiet();
      }
    },
  );
}
