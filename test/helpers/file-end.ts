// Cleanups owed by the test file being run, for helpers whose module outlives it: test files share a worker's modules.
/** What the running test file still has to clean up, last registered first. */
const pending: (() => unknown)[] = [];

/**
 * Runs `cleanup` after the current test file's tests (and its own `afterAll` hooks). A helper
 * registers here, not with `afterAll` at its top level: its module is evaluated once per worker,
 * so a top-level hook would belong to the first test file that imported it.
 */
export function atFileEnd(cleanup: () => unknown): void {
  pending.push(cleanup);
}

/** Runs and forgets the cleanups {@link atFileEnd} registered; the setup file calls it after each file. */
export async function runFileEnd(): Promise<void> {
  for (const cleanup of pending.splice(0).reverse()) await cleanup();
}
