// A seed whose seqs do not count up from 0 is INVALID_EVENT (seq-contiguous), from the store and over the wire.
import { afterAll, describe, expect, it } from "vitest";
import { InvalidEventError, type SessionEvent, SessionStore } from "../../src/index.js";
import { turnStart, userMessage } from "../helpers/builders.js";
import { expectCode, spawnedClient, tempDir } from "../helpers/rpc-fixtures.js";
import { rejectionOf } from "../helpers/store-builders.js";

const temp = tempDir("seedline-seed-seq-");
afterAll(() => temp.remove());

/**
 * Seeds that break seq-contiguous, with the details expected (index and seq in the seed) and
 * how many of its events break it (every one is listed).
 */
const CASES: readonly [string, readonly SessionEvent[], { seq: number; index: number }, number][] =
  [
    ["starts at seq 1", [turnStart(1, 1)], { seq: 1, index: 0 }, 1],
    ["starts at seq 5", [userMessage(5, "a"), userMessage(6, "b")], { seq: 5, index: 0 }, 2],
    ["starts at seq -1", [userMessage(-1, "a")], { seq: 0, index: 0 }, 1],
    ["skips a seq", [userMessage(0, "a"), userMessage(2, "b")], { seq: 2, index: 1 }, 1],
  ];

describe("a seed that does not count up from seq 0", () => {
  it.each(CASES)(
    "that %s is INVALID_EVENT seq-contiguous from store.create, nothing stored",
    async (_what, seed, at, count) => {
      // Seen failing before the fix: "starts at seq 1/5/-1" were StorageError SEQ_CONFLICT {expectedSeq: 0}.
      const store = new SessionStore();
      const error = await rejectionOf(store.create({ id: "s", seed }));
      expect(error).toBeInstanceOf(InvalidEventError);
      expect((error as InvalidEventError).code).toBe("INVALID_EVENT");
      const first = { ...at, rule: "seq-contiguous", instancePath: "/seq" };
      expect((error as InvalidEventError).details).toEqual({
        ...first,
        problems: expect.any(Array),
        problemCount: count,
      });
      const problems = (error as InvalidEventError).problems;
      expect(problems).toHaveLength(count);
      expect(problems[0]).toEqual({ ...first, message: expect.stringMatching(/^expected seq /) });
      for (const p of problems) expect(p.rule).toBe("seq-contiguous");
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
      problems: [
        {
          seq: 1,
          index: 0,
          rule: "seq-contiguous",
          instancePath: "/seed/0/seq",
          message: "expected seq 0 (the index in the log), got 1",
        },
      ],
      problemCount: 1,
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
