// The types a backend author passes to the backend contract: the test functions, the harness, its limits.
import type { SessionBackend } from "../store/backend.js";

/** A test body: the contract's bodies take no arguments and return a promise. */
export type ContractBody = () => Promise<void>;

/**
 * The test functions of the caller's runner. vitest, jest, mocha and node:test all fit:
 * `{ describe, it }` from any of them.
 */
export interface TestFunctions {
  describe(title: string, body: () => void): unknown;
  it: {
    (title: string, body: ContractBody): unknown;
    /** Registers a case that does not run; its title states the reason. */
    skip(title: string, body: ContractBody): unknown;
  };
}

/** Ways to damage a backend's stored form in place, for the cases about torn or foreign data. */
export interface ContractTamper {
  /** Leaves a partial record after the last one (a write cut short). */
  tearTail(id: string): Promise<void>;
  /** Rewrites the stored header's session format version. */
  setFormatVersion(id: string, version: number): Promise<void>;
  /** Makes the record at `seq` unreadable (not JSON). */
  garble(id: string, seq: number): Promise<void>;
  /** Rewrites the type of the stored event at `seq` (to one the format does not know). */
  setType(id: string, seq: number, type: string): Promise<void>;
  /** A fingerprint of every stored byte, to show that a refused read changed nothing. */
  fingerprint(): Promise<string>;
}

/** Fresh, empty storage for one case, and backend instances over it. */
export interface ContractHarness {
  /**
   * Opens a backend instance over this harness's storage. Two instances behave as two processes
   * would (each its own writer locks) unless `ContractLimits.oneWriter` says why not. The contract
   * closes every instance it opened before it calls `cleanup`.
   */
  open(): Promise<SessionBackend>;
  /** Damages stored data; absent when `ContractLimits.noTamper` says why. */
  readonly tamper?: ContractTamper;
  /** Removes the storage. */
  cleanup(): Promise<void>;
}

/** What a backend cannot do, each with the reason that shows in the skipped cases' titles. */
export interface ContractLimits {
  /** Why the cases that damage stored data are skipped (the backend keeps no stored form). */
  readonly noTamper?: string;
  /** Why the cases that need two writers are skipped (every instance is the same writer). */
  readonly oneWriter?: string;
}

/** One recorded log for the corpus round trip: JSONL text, a header line then one event per line. */
export interface ContractCorpusLog {
  /** Shown in the case title, e.g. `subagent-fork/session.1.jsonl`. */
  readonly name: string;
  /** The log in its canonical JSONL form, as `exportLog` writes it. */
  readonly text: string;
}

/** The backend under test. */
export interface BackendContractOptions {
  /** Shown in the suite title. */
  readonly name: string;
  /** Makes fresh, empty storage for one case; called once per case. */
  harness(): Promise<ContractHarness>;
  readonly limits?: ContractLimits;
  /** Logs to store through the backend and read back unchanged, one case each. */
  readonly corpus?: readonly ContractCorpusLog[];
  /**
   * Cases to register as skipped, by exact title, each with its reason (a known bug, with a link
   * to its issue). A title that names no case fails the registration, so a stale entry shows.
   */
  readonly skip?: Readonly<Record<string, string>>;
}
