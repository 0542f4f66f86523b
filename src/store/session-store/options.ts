// The options and answers of a SessionStore that its modules share: how a store is set up, how an append and a fork are asked for, and what a listing returns.
import type { ListedSession, SessionBackend } from "../backend.js";
import type { UNPACKED_TEXT_BUDGET } from "./text-budget.js";

/** One listed session as the store reports it: `updatedAt` (last activity) as an ISO 8601 string. */
export interface StoreListedSession extends Omit<ListedSession, "updatedAt"> {
  /** Last activity (the time of the last event, else createdAt) as an ISO 8601 UTC string. */
  readonly updatedAt?: string;
}

/** One page of `SessionStore.list`, in the order asked for. */
export interface StoreListPage {
  readonly sessions: readonly StoreListedSession[];
  readonly nextCursor?: string;
}

/** How a store is set up. */
export interface SessionStoreOptions {
  /** Where sessions are kept; defaults to a new in-memory backend. */
  readonly backend?: SessionBackend;
  /** The clock for `createdAt` (epoch ms); defaults to `Date.now`. */
  readonly now?: () => number;
  /** Makes ids for sessions created without one; defaults to random UUID v4. */
  readonly newId?: () => string;
  /**
   * The most writer locks held at once ({@link DEFAULT_MAX_WRITER_LOCKS} unless given): past it,
   * the session written least recently lets go of its lock (it stays loaded; its next write takes
   * the lock again and reads what other processes stored meanwhile). Each held lock costs an open
   * file and about 150 KiB of native memory.
   */
  readonly maxWriterLocks?: number;
  /**
   * The most message text, in UTF-16 code units, the live sessions keep unpacked as the text of
   * their events ({@link UNPACKED_TEXT_BUDGET} unless given): past it, the sessions appended to
   * least recently have their oldest messages deflated, down to half of it. A smaller budget
   * holds less memory for a session written for long (a recording proxy's) and costs a deflate
   * on the append's path more often; what `deriveMessages` returns is the same either way.
   */
  readonly unpackedTextBudget?: number;
}

/** How many writer locks a store holds at once unless told otherwise. */
export const DEFAULT_MAX_WRITER_LOCKS = 256;

/** How `append` takes its batch. */
export interface AppendOptions {
  /**
   * The events come straight from `JSON.parse` and are the store's to keep: they are taken as
   * they are instead of copied, checked only for depth and against the schema (the content of a
   * message-producing event is frozen in place: the session's messages share it). The caller must
   * not change them afterwards. Never set it for values built in code: the lossless-JSON checks a
   * copy makes are skipped.
   */
  readonly parsed?: boolean;
}

/** Options of a fork: where to cut, the child's id and its working directory. */
export interface ForkOptions {
  /** The last event copied into the child (inclusive); defaults to the source's last event. */
  readonly boundary?: number | undefined;
  /** The child's id; the store generates one when absent. */
  readonly childSessionId?: string | undefined;
  /** The child's working directory (absolute); defaults to the source's. */
  readonly cwd?: string | undefined;
}
