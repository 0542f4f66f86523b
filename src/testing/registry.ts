// How contract cases are registered and run: fresh storage per case, every opened instance closed after it.
import { show } from "../errors.js";
import type { SessionBackend } from "../store/backend.js";
import { SessionStore } from "../store/session-store.js";
import { BASE_TIME } from "./events.js";
import type {
  BackendContractOptions,
  ContractHarness,
  ContractLimits,
  ContractTamper,
  TestFunctions,
} from "./types.js";

/** One case's storage: instances over it, stores over them, and its tamper hooks. */
export interface CaseStorage {
  /** Opens an instance; the contract closes it after the case unless the case did. */
  open(): Promise<SessionBackend>;
  /** Closes an instance during the case (close need not be idempotent: it runs once). */
  close(backend: SessionBackend): Promise<void>;
  /**
   * Opens a `SessionStore` over a new instance, its clock shared with the case's other stores
   * (each call of `now` a millisecond after the last, from `BASE_TIME`). The contract closes the
   * instance after the case unless the case closed the store.
   */
  openStore(): Promise<SessionStore>;
  /**
   * Closes a store during the case, as a process that ends cleanly would: its locks released,
   * then its instance closed (once).
   */
  closeStore(store: SessionStore): Promise<void>;
  /**
   * The harness's tamper hooks.
   * @throws Error when the harness has none (the case should have been skipped).
   */
  tamper(): ContractTamper;
}

/** A case body, run on fresh storage. */
export type CaseBody = (storage: CaseStorage) => Promise<void>;

/** Where case files register their cases. */
export interface CaseRegistry {
  readonly limits: ContractLimits;
  /**
   * Registers a case; with `limit` set (a reason from `ContractLimits`), or with its title in
   * `options.skip`, a skipped case whose title gives the reason.
   */
  add(title: string, body: CaseBody, limit?: string): void;

  /**
   * Checks that every title of `options.skip` named a registered case.
   * @throws Error naming the titles that matched none.
   */
  checkSkips(): void;
}

/** A registry over the caller's test functions and harness. */
export function caseRegistry(test: TestFunctions, options: BackendContractOptions): CaseRegistry {
  const limits = options.limits ?? {};
  const skips = new Map(Object.entries(options.skip ?? {}));
  return {
    limits,
    add(title, body, limit) {
      const skip = limit ?? skips.get(title);
      skips.delete(title);
      if (skip !== undefined) {
        test.it.skip(`${title} — skipped: ${skip}`, async () => {});
        return;
      }
      test.it(title, () => runCase(options, body));
    },
    checkSkips() {
      if (skips.size === 0) return;
      throw new Error(
        `expected every title in the ${show(options.name)} contract's skip list to name a case, got ${[...skips.keys()].map((t) => show(t)).join(", ")}`,
      );
    },
  };
}

async function runCase(options: BackendContractOptions, body: CaseBody): Promise<void> {
  const harness: ContractHarness = await options.harness();
  const opened = new Set<SessionBackend>();
  let clock = BASE_TIME;
  const now = () => ++clock;
  const storage: CaseStorage = {
    async open() {
      const backend = await harness.open();
      opened.add(backend);
      return backend;
    },
    async close(backend) {
      opened.delete(backend);
      await backend.close();
    },
    async openStore() {
      return new SessionStore({ backend: await storage.open(), now });
    },
    async closeStore(store) {
      opened.delete(store.backend);
      await store.close();
    },
    tamper() {
      if (harness.tamper === undefined) {
        throw new Error(
          `expected the ${show(options.name)} harness to have tamper hooks, found none; declare limits.noTamper instead`,
        );
      }
      return harness.tamper;
    },
  };
  let failure: { readonly error: unknown } | undefined;
  try {
    await body(storage);
  } catch (error) {
    failure = { error };
  }
  try {
    // An instance can come back twice (a backend that is one shared object): close each once.
    for (const backend of opened) await backend.close();
  } catch (error) {
    // The case's own failure says more than a close that failed after it.
    failure ??= { error };
  } finally {
    await harness.cleanup();
  }
  if (failure !== undefined) throw failure.error;
}
