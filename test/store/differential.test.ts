// Differential property: random valid logs written through every backend read back identically.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import {
  lastCompletedTurnBoundary,
  type SessionBackend,
  type SessionEvent,
  SessionStore,
} from "../../src/index.js";
import { backendKinds } from "../helpers/backend-kinds.js";
import { validLogArb } from "../helpers/log-arbitrary.js";
import { POSTGRES_SKIP } from "../helpers/postgres-harness.js";

const root = mkdtempSync(join(tmpdir(), "seedline-differential-"));
const kinds = backendKinds();
afterAll(async () => {
  rmSync(root, { recursive: true, force: true });
  await kinds.cleanup();
});

/** Each backend kind, opened (again, as a fresh instance) over storage named by `dir`. */
const BACKENDS = kinds.open;
const KINDS = Object.keys(BACKENDS).join(", ");

/** What a reader can observe of a stored session, after a reopen. */
interface Observed {
  readonly events: readonly SessionEvent[];
  readonly exported: string;
  readonly listed: unknown;
  readonly messages: unknown;
  readonly child: string | undefined;
}

let run = 0;

/** Writes `events` (a seed, then the rest in batches of `batch`) and reads everything back through a fresh instance. */
async function roundTrip(
  kind: string,
  events: readonly SessionEvent[],
  split: number,
  batch: number,
): Promise<Observed> {
  const dir = join(root, `${kind}-${run}`);
  const open = BACKENDS[kind] as (dir: string) => Promise<SessionBackend>;
  const writer = new SessionStore({ backend: await open(dir), now: () => 1000 });
  const session = await writer.create({
    id: "s",
    seed: events.slice(0, split),
    meta: { cwd: "/w", createdAt: 7 },
  });
  for (let from = split; from < events.length; from += batch) {
    await session.append(events.slice(from, from + batch));
  }
  const boundary = lastCompletedTurnBoundary(await session.readEvents());
  if (boundary !== undefined) await writer.fork("s", { boundary, childSessionId: "child" });
  await writer.close();
  const reader = new SessionStore({ backend: await open(dir), now: () => 2000 });
  try {
    const loaded = await reader.load("s");
    return {
      events: await loaded.readEvents(),
      exported: await reader.exportLog("s"),
      listed: (await reader.list()).sessions,
      messages: loaded.deriveMessages(),
      child: (await reader.get("child")) && (await reader.exportLog("child")),
    };
  } finally {
    await reader.close();
  }
}

describe("differential: every backend stores and reads back the same thing", () => {
  it(`gives identical results across ${KINDS}, equal to the input${POSTGRES_SKIP === undefined ? "" : ` (PostgreSQL skipped: ${POSTGRES_SKIP})`}`, async () => {
    let logs = 0;
    await fc.assert(
      fc.asyncProperty(
        validLogArb,
        fc.nat(),
        fc.integer({ min: 1, max: 12 }),
        async (events, splitSeed, batch) => {
          run++;
          logs++;
          const split = events.length === 0 ? 0 : splitSeed % (events.length + 1);
          const results = await Promise.all(
            Object.keys(BACKENDS).map((kind) => roundTrip(kind, events, split, batch)),
          );
          const [first, ...rest] = results as [Observed, ...Observed[]];
          // The input is a prefix: a log left inside a turn comes back closed by crash repair.
          expect(first.events.slice(0, events.length)).toEqual(events);
          for (const other of rest) expect(other).toEqual(first);
        },
      ),
      { numRuns: 40 },
    );
    console.log(
      `differential: ${logs} random logs × ${Object.keys(BACKENDS).length} backends (${KINDS}) agreed`,
    );
  });
});
