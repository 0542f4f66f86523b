// INVALID_EVENT lists every problem of a refused batch, seed or imported log (data.problems), through the SDK on SQLite and over a spawned server.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  InvalidEventError,
  type InvalidEventProblem,
  SessionStore,
  SqliteBackend,
} from "../../src/index.js";
import { MAX_LISTED_PROBLEMS } from "../../src/log/event-errors.js";
import { testHeader, todoWrite, userMessage } from "../helpers/builders.js";
import { expectCode, logText, ROOT, spawnedClient, tempDir } from "../helpers/rpc-fixtures.js";
import { rejectionOf } from "../helpers/store-builders.js";

const temp = tempDir("seedline-batch-problems-");
afterAll(() => temp.remove());

const SEED = [userMessage(0, "seed")];

/** A user/message without its surface marker (rule surface-marker). */
function unmarked(seq: number) {
  const { surfaceOp: _dropped, ...event } = userMessage(seq, "no marker");
  return event;
}

/**
 * Events 1.. of a log after SEED: a valid one, then three that break three different rules — the
 * schema (no content), the surface marker (none), surface-marker-forbidden (one on todo/write).
 */
const BATCH: readonly unknown[] = [
  userMessage(1, "fine"),
  { ...userMessage(2, "x"), data: {} },
  unmarked(3),
  { ...todoWrite(4), surfaceOp: "append" },
];

/** The problems BATCH breaks, with each instancePath under `prefix(index)`. */
function expectedProblems(prefix: (index: number) => string): InvalidEventProblem[] {
  return [
    {
      seq: 2,
      index: 1,
      rule: "schema",
      instancePath: `${prefix(1)}/data`,
      message: expect.stringMatching(/^expected a valid "user\/message" event, got: \/data /),
    },
    {
      seq: 3,
      index: 2,
      rule: "surface-marker",
      instancePath: prefix(2),
      message: "expected surfaceOp on user/message (a surface-eligible type), got none",
    },
    {
      seq: 4,
      index: 3,
      rule: "surface-marker-forbidden",
      instancePath: `${prefix(3)}/surfaceOp`,
      message: "expected no surfaceOp on todo/write, got one",
    },
  ];
}

describe("a batch with several broken events", () => {
  // Seen failing before the change: details had no `problems`; the answer named index 1 alone.
  it("is refused through the SDK on SQLite with every problem listed, the first in the old fields, nothing stored", async () => {
    const store = new SessionStore({
      backend: await SqliteBackend.open(join(temp.dir, "sdk.db")),
    });
    await store.create({ id: "s", seed: SEED });
    const error = await rejectionOf(store.append("s", BATCH));
    expect(error).toBeInstanceOf(InvalidEventError);
    const refused = error as InvalidEventError;
    expect(refused.code).toBe("INVALID_EVENT");
    expect(refused.details).toEqual({
      seq: 2,
      index: 1,
      rule: "schema",
      instancePath: "/data",
      problems: expectedProblems(() => ""),
      problemCount: 3,
    });
    expect(refused.message).toMatch(/\(and 2 more problems\)$/);
    expect(await store.readEvents("s")).toEqual(SEED);
    // The same batch repaired appends: the refusal left the log as it was.
    const fixed = [
      userMessage(1, "fine"),
      userMessage(2, "x"),
      userMessage(3, "y"),
      userMessage(4, "z"),
    ];
    expect(await store.append("s", fixed)).toBe(5);
    await store.close();
  });

  it("lists at most 100 problems and counts them all", async () => {
    // After a valid first event, 150 events each one seq ahead of its place: 150 seq-contiguous
    // problems (a batch whose first seq is past the end would be SEQ_CONFLICT instead).
    const batch = [
      userMessage(1, "fine"),
      ...Array.from({ length: 150 }, (_, i) => userMessage(i + 3, `m${i}`)),
    ];
    const store = new SessionStore({
      backend: await SqliteBackend.open(join(temp.dir, "many.db")),
    });
    await store.create({ id: "s", seed: SEED });
    const error = (await rejectionOf(store.append("s", batch))) as InvalidEventError;
    expect(error.problemCount).toBe(150);
    expect(error.problems).toHaveLength(100);
    expect(error.problems.map((p) => p.index)).toEqual(
      Array.from({ length: 100 }, (_, i) => i + 1),
    );
    expect(error.problems.every((p) => p.rule === "seq-contiguous")).toBe(true);
    expect(await store.readEvents("s")).toEqual(SEED);
    await store.close();
  });

  it("bounds the list where the error table says", () => {
    const table = JSON.parse(readFileSync(join(ROOT, "schema/rpc/errors.json"), "utf8")) as {
      domainErrors: { code: string; data: { properties: { problems: { maxItems: number } } } }[];
    };
    const entry = table.domainErrors.find((e) => e.code === "INVALID_EVENT");
    expect(entry?.data.properties.problems.maxItems).toBe(MAX_LISTED_PROBLEMS);
  });

  it("answers every problem over the wire from a spawned server: append, create with a seed, import", async () => {
    // Seen failing before the change: data was {code, seq: 2, index: 1, rule, instancePath} only.
    const { client } = spawnedClient(`sqlite:${temp.dir}/wire.db`, "ndjson");
    await client.sessionCreate({ sessionId: "s", seed: SEED });

    const appended = await expectCode(
      client.sessionAppend({ sessionId: "s", events: BATCH as never }),
      "INVALID_EVENT",
    );
    expect(appended.data).toEqual({
      code: "INVALID_EVENT",
      seq: 2,
      index: 1,
      rule: "schema",
      instancePath: "/events/1/data",
      problems: expectedProblems((i) => `/events/${i}`),
      problemCount: 3,
    });
    expect((await client.sessionRead({ sessionId: "s" })).nextSeq).toBe(1);

    // As a seed the batch stands at seqs 1.. after the seed's first event, and so do its problems.
    const seeded = await expectCode(
      client.sessionCreate({ sessionId: "t", seed: [...SEED, ...BATCH] as never }),
      "INVALID_EVENT",
    );
    const shifted = (prefix: (i: number) => string) =>
      expectedProblems(() => "").map((p) => ({
        ...p,
        index: p.index + 1,
        instancePath: `${prefix(p.index + 1)}${p.instancePath}`,
      }));
    expect(seeded.data).toMatchObject({ index: 2, problemCount: 3 });
    expect((seeded.data as { problems: unknown }).problems).toEqual(shifted((i) => `/seed/${i}`));
    await expectCode(client.sessionRead({ sessionId: "t" }), "SESSION_NOT_FOUND");

    // An imported log's paths point into the event itself.
    const imported = await expectCode(
      client.sessionImport({ log: logText(testHeader("u"), [...SEED, ...BATCH]) }),
      "INVALID_EVENT",
    );
    expect((imported.data as { problems: unknown }).problems).toEqual(shifted(() => ""));
    await expectCode(client.sessionRead({ sessionId: "u" }), "SESSION_NOT_FOUND");

    await client.close();
    expect(await client.exited).toEqual({ code: 0, signal: null });
  });
});
