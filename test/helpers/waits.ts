// Waiting in tests for something that must happen: a bound that catches a hang, never a timing check.

/** How long a wait lasts before it fails: long enough for a loaded machine, short of a test timeout. */
export const WAIT_MS = 20_000;

/** `promise`, or a rejection naming `what` when it has not settled after {@link WAIT_MS}. */
export async function within<T>(promise: Promise<T>, what: string, ms = WAIT_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`expected ${what} within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Polls `predicate` every 10 ms until it holds; fails naming `what` after {@link WAIT_MS}. */
export async function waitUntil(
  predicate: () => boolean,
  what: string,
  ms = WAIT_MS,
): Promise<void> {
  const deadline = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`expected ${what} within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
