// M1's child process: opens one JSONL session for writing through the store and prints its peak RSS as one JSON line.
import { JsonlBackend, SessionStore } from "../../src/index.js";

/** What the child reports on stdout. */
export interface MemoryReport {
  readonly events: number;
  /** Peak RSS after the imports, before the load (bytes). */
  readonly baselineRss: number;
  /** Peak RSS after the load (bytes). */
  readonly peakRss: number;
  /** The V8 heap in use with the loaded session still referenced (bytes). */
  readonly heapUsed: number;
  readonly loadMs: number;
}

async function main(): Promise<void> {
  const [root, id] = process.argv.slice(2);
  if (root === undefined || id === undefined) throw new Error("usage: m1-child ROOT SESSION_ID");
  const baselineRss = process.resourceUsage().maxRSS * 1024;
  const store = new SessionStore({ backend: new JsonlBackend(root) });
  const start = performance.now();
  const session = await store.openForWriting(id);
  const loadMs = performance.now() - start;
  const report: MemoryReport = {
    events: session.nextSeq,
    baselineRss,
    peakRss: process.resourceUsage().maxRSS * 1024,
    heapUsed: process.memoryUsage().heapUsed,
    loadMs,
  };
  process.stdout.write(`${JSON.stringify(report)}\n`);
  await store.close();
}

await main();
