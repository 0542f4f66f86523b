// What a SQL backend has framed of each session's open turn, so that `forkPoint` frames only the rows written since.
import { isDeepStrictEqual } from "node:util";
import type { SessionHeader } from "../../generated.js";

/** The sessions whose framed tail a backend remembers; past it the least recently framed is forgotten. */
const MOST_TAILS = 1024;

/** One session's framed tail: the rows after its last `turn/end` found intact, under that header. */
interface FramedTail {
  readonly header: SessionHeader;
  readonly settled: number;
  readonly intact: number;
}

/**
 * The intact rows a backend instance found after each session's last `turn/end` (its open turn),
 * so that the next `forkPoint` of the session frames only the rows after them: a reader asking for
 * the open turn after each append frames each row once, not the whole open turn each time.
 *
 * Rows of an open turn are only ever added after it: a repair (here or in another process) keeps
 * every intact row and ends the turn (a new last `turn/end`: the tail is framed anew), a delete
 * ends the session. What is remembered is taken only while the session has the same header and the
 * same last `turn/end`, and while the last row found intact is still there (`proofSeq`); a session
 * deleted and created again shorter, or with another header, is framed from its last `turn/end`.
 */
export class FramedTails {
  readonly #tails = new Map<string, FramedTail>();

  /**
   * Where framing of session `id` can start: `settled` plus the rows already found intact there,
   * less one row, the proof that they are still there (framed again: it must hold its event).
   * `settled` when nothing is remembered under this header and last `turn/end`.
   */
  start(id: string, header: SessionHeader, settled: number): number {
    const tail = this.#tails.get(id);
    if (tail === undefined || tail.settled !== settled || tail.intact === 0) return settled;
    if (!isDeepStrictEqual(tail.header, header)) return settled;
    return settled + tail.intact - 1;
  }

  /**
   * What is remembered of session `id` whatever its header: the last `turn/end` it was framed
   * under (as `settled`) and where {@link start} would start under that header; undefined when
   * nothing is. For a reader asking before it knows the header, which it then gives to
   * {@link start}.
   */
  hint(id: string): { readonly settled: number; readonly from: number } | undefined {
    const tail = this.#tails.get(id);
    if (tail === undefined || tail.intact === 0) return undefined;
    return { settled: tail.settled, from: tail.settled + tail.intact - 1 };
  }

  /** Notes that the rows of session `id` from `settled` up to (not including) `length` are intact. */
  note(id: string, header: SessionHeader, settled: number, length: number): void {
    this.#tails.delete(id);
    if (length <= settled) return;
    this.#tails.set(id, { header, settled, intact: length - settled });
    if (this.#tails.size > MOST_TAILS) {
      const oldest = this.#tails.keys().next().value as string;
      this.#tails.delete(oldest);
    }
  }

  /** Forgets session `id` (deleted or repaired by this backend). */
  forget(id: string): void {
    this.#tails.delete(id);
  }
}
