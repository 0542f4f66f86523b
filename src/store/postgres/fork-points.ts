// PostgreSQL fork points: what openTurn asks at each read in one statement, every other fork point in a read transaction, and what was framed of each session's open turn.
import type { PoolClient } from "pg";
import { show } from "../../errors.js";
import type { SessionHeader } from "../../generated.js";
import type { SessionBackend, StoredForkPoint } from "../backend.js";
import * as sql from "../sql/core.js";
import { frameRows, JSON_MEMBERS } from "./event-reads.js";
import { markerOfRow, splitOpenTurnRead } from "./rows.js";
import type { Queries } from "./statements.js";
import type { Transactions } from "./transactions.js";

/** The fast read of a fork point cannot answer alone: read it in a read transaction. */
const READ_AGAIN = Symbol("read again");

/** The fork points of a backend's sessions (see {@link SessionBackend.forkPoint}). */
export class ForkPoints {
  readonly #db: Transactions;
  readonly #queries: Queries;
  readonly #location: string;
  /** What was framed of each session's open turn. */
  readonly #tails = new sql.FramedTails();

  constructor(db: Transactions, queries: Queries, location: string) {
    this.#db = db;
    this.#queries = queries;
    this.#location = location;
  }

  /** Forgets what was framed of session `id` (repaired or deleted by this backend). */
  forget(id: string): void {
    this.#tails.forget(id);
  }

  /**
   * The fork point of session `id` at `boundary` (the last intact event when undefined; see
   * {@link SessionBackend.forkPoint}); undefined when there is no such session.
   */
  async read(id: string, boundary: number | undefined): Promise<StoredForkPoint | undefined> {
    if (boundary === undefined) {
      const point = await this.#openTurnPoint(id);
      if (point !== READ_AGAIN) return point;
    }
    return this.#db.read(`read the fork point of session ${show(id)}`, async (c) => {
      const row = await this.#queries.first(c, "sessionHeader", { sessionId: id });
      if (row === undefined) return undefined;
      const header = sql.readHeader(row, id, this.#location);
      // The intact length: every row up to the last turn/end is settled (load finds any damage
      // there), and the rows after it are framed, so that a torn tail does not count.
      const last = await this.#queries.first(c, "lastTurnEnd", { sessionId: id });
      const settled = last === undefined ? 0 : Number(last.seq) + 1;
      const length = await this.#intactLength(c, id, header, settled);
      const at = boundary ?? length - 1;
      if (at < 0) return { header, length, marker: undefined };
      const found = await this.#queries.first(c, "lastTurnMarker", { sessionId: id, boundary: at });
      const marker = found && markerOfRow(found, sql.eventsOf(id, this.#location));
      // No turn/end can follow the last event: the usual case of openTurn asks nothing more.
      if (marker?.type !== "turn/start" || at >= length - 1) return { header, length, marker };
      const next = await this.#queries.first(c, "nextTurnEnd", { sessionId: id, fromSeq: at + 1 });
      return { header, length, marker, ...sql.closedAtOf(next?.seq, length) };
    });
  }

  /**
   * forkPoint at the last intact event (what openTurn asks: a reader following a session asks it at
   * each read) in one statement (openTurnRead: one snapshot, one round trip, no transaction), the
   * rows of the open turn framed from where the last framing left off. {@link READ_AGAIN} where the
   * statement cannot answer alone — the framed rows are not this header's, the last row found
   * intact is gone, a bad row needs the lookup of a later turn/end, the last turn marker is past
   * the intact events — and forkPoint then reads in a read transaction.
   */
  async #openTurnPoint(id: string): Promise<StoredForkPoint | undefined | typeof READ_AGAIN> {
    const hint = this.#tails.hint(id);
    const found = await this.#db.withClient(`read the fork point of session ${show(id)}`, (c) =>
      this.#queries.valueRows(c, "openTurnRead", {
        sessionId: id,
        settled: hint?.settled ?? -1,
        fromSeq: hint?.from ?? 0,
      }),
    );
    const split = splitOpenTurnRead(found.rows, found.columns);
    if (split === undefined) return undefined;
    const header = sql.readHeader(split.header, id, this.#location);
    const settled = split.lastTurnEnd === undefined ? 0 : split.lastTurnEnd + 1;
    // Where the statement's rows start, and where framing must start under this header.
    const from = hint !== undefined && hint.settled === settled ? hint.from : settled;
    if (this.#tails.start(id, header, settled) !== from) return READ_AGAIN;
    const location = sql.eventsOf(id, this.#location);
    const scanned = sql.scanEventRows(
      split.rows,
      from,
      sql.valueRowForm(split.columns, JSON_MEMBERS),
    );
    if (sql.turnEndLookup(scanned, undefined) !== undefined) return READ_AGAIN;
    const framed = sql.judgeEventRows(scanned, location).events.length;
    if (framed === 0 && from > settled) return READ_AGAIN;
    const length = from + framed;
    this.#tails.note(id, header, settled, length);
    if (length === 0) return { header, length, marker: undefined };
    const row = split.marker;
    if (row !== undefined && row.seq > length - 1) return READ_AGAIN;
    return { header, length, marker: row && markerOfRow(row, location) };
  }

  /**
   * The number of intact events of session `id`: its rows up to `settled` and the intact run after
   * them, framed from where the last framing of its open turn left off ({@link sql.FramedTails}).
   */
  async #intactLength(
    c: PoolClient,
    id: string,
    header: SessionHeader,
    settled: number,
  ): Promise<number> {
    const frame = async (from: number) =>
      (await frameRows(this.#queries, c, this.#location, id, from, undefined)).events.length;
    const start = this.#tails.start(id, header, settled);
    let from = start;
    let framed = await frame(start);
    // The proof row is gone: not the rows framed before; frame the open turn anew.
    if (framed === 0 && start > settled) {
      from = settled;
      framed = await frame(settled);
    }
    this.#tails.note(id, header, settled, from + framed);
    return from + framed;
  }
}
