// A seed whose seqs do not count up from 0 is INVALID_EVENT (seq-contiguous), from the store and over the wire.
import { afterAll, describe, expect, it } from "vitest";
import { InvalidEventError, type SessionEvent, SessionStore } from "../src/index.js";
import { turnStart, userMessage } from "./builders.js";
import { expectCode, spawnedClient, tempDir } from "./rpc-fixtures.js";
import { rejectionOf } from "./store-builders.js";

const temp = tempDir("seedline-seed-seq-");
afterAll(() => temp.remove());

/** Seeds that break seq-contiguous, with the details expected (index and seq in the seed). */
const CASES: readonly [string, readonly SessionEvent[], { seq: number; index: number }][] = [
  ["starts at seq 1", [turnStart(1, 1)], { seq: 1, index: 0 }],
  ["starts at seq 5", [userMessage(5, "a"), userMessage(6, "b")], { seq: 5, index: 0 }],
  ["starts at seq -1", [userMessage(-1, "a")], { seq: 0, index: 0 }],
  ["skips a seq", [userMessage(0, "a"), userMessage(2, "b")], { seq: 2, index: 1 }],
];

describe("a seed that does not count up from seq 0", () => {
  it.each(CASES)(
    "that %s is INVALID_EVENT seq-contiguous from store.create, nothing stored",
    async (_what, seed, at) => {
      // Seen failing before the fix: "starts at seq 1/5/-1" were StorageError SEQ_CONFLICT {expectedSeq: 0}.
      const store = new SessionStore();
      const error = await rejectionOf(store.create({ id: "s", seed }));
      expect(error).toBeInstanceOf(InvalidEventError);
      expect((error as InvalidEventError).code).toBe("INVALID_EVENT");
      expect((error as InvalidEventError).details).toEqual({
        ...at,
        rule: "seq-contiguous",
        instancePath: "/seq",
      });
      expect(await store.backend.has("s")).toBe(false);
    },
  );

  it("is INVALID_EVENT over the wire from a spawned server, for session/create", async () => {
    // Seen failing before the fix: answered SEQ_CONFLICT (-32013), a code session/create does not declare.
    const { client } = spawnedClient(`jsonl:${temp.dir}/store`, "ndjson");
    const created = await expectCode(
      client.sessionCreate({ sessionId: "s", seed: [turnStart(1, 1)] }),
      "INVALID_EVENT",
    );
    expect(created.data).toEqual({
      code: "INVALID_EVENT",
      seq: 1,
      index: 0,
      rule: "seq-contiguous",
      instancePath: "/seed/0/seq",
    });
    const negative = await expectCode(
      client.sessionCreate({ sessionId: "s", seed: [userMessage(-1, "a")] }),
      "INVALID_EVENT",
    );
    expect(negative.data).toMatchObject({ seq: 0, index: 0, rule: "seq-contiguous" });
    await expectCode(client.sessionRead({ sessionId: "s" }), "SESSION_NOT_FOUND");
    await client.close();
    expect(await client.exited).toEqual({ code: 0, signal: null });
  });
});
