// Reads of the PostgreSQL backend: a session's event rows from a seq on, framed and judged by the SQL core's rules.
import type { PoolClient } from "pg";
import type { SessionHeader } from "../../generated.js";
import * as sql from "../sql/core.js";
import { POSTGRES_TABLES, type Queries } from "./statements.js";

/** The event members the layout stores as JSON text. */
export const JSON_MEMBERS = sql.jsonMembers(POSTGRES_TABLES.events);

/** A page bounded by bytes as sessionPageWithin sends it: its rows, cut or not, and the header. */
interface PageWithin {
  readonly read: { rows: unknown[][]; columns: string[] };
  readonly cut: boolean;
  /** The header's JSON text, on the row at `first`; undefined when there is no such row. */
  readonly headerText: string | undefined;
}

/**
 * Reads a page bounded by bytes with sessionPageWithin: the statement sends no row past the
 * budget (the first `proof` rows are not counted), at least one event.
 */
async function readPageWithin(
  queries: Queries,
  c: PoolClient,
  id: string,
  first: number,
  take: number | undefined,
  maxBytes: number,
  proof: number,
): Promise<PageWithin> {
  const read = await queries.valueRows(c, "sessionPageWithin", {
    sessionId: id,
    fromSeq: first,
    limit: take ?? null,
    maxBytes,
    pageFrom: first + proof,
  });
  // "following" and "header" come last, after the event's columns, and are not its members: a
  // last row that has a next row in the range, on a page short of the limit, ends a page cut by
  // bytes.
  const width = read.columns.length;
  const following = read.rows[read.rows.length - 1]?.[width - 2];
  const text = read.rows[0]?.[width - 1];
  return {
    read: { rows: read.rows, columns: read.columns.slice(0, -2) },
    cut:
      following !== null &&
      following !== undefined &&
      (take === undefined || read.rows.length < take),
    headerText: typeof text === "string" ? text : undefined,
  };
}

/**
 * The rows of `id` from seq `first` on (at most `take`; undefined: all), framed and judged, on
 * `c` (in a read transaction: the lookup of the next turn/end sees the same snapshot); with
 * `maxBytes`, only the rows that fit in it ({@link readPageWithin}; the first `proof` rows are not
 * counted), at least one event.
 */
export async function frameRows(
  queries: Queries,
  c: PoolClient,
  location: string,
  id: string,
  first: number,
  take: number | undefined,
  maxBytes?: number,
  proof = 0,
): Promise<sql.FramedLog & { cut?: true }> {
  const { read, cut } =
    maxBytes === undefined
      ? {
          read: await queries.valueRows(c, "eventRows", {
            sessionId: id,
            fromSeq: first,
            limit: take ?? null,
          }),
          cut: false,
        }
      : await readPageWithin(queries, c, id, first, take, maxBytes, proof);
  const { rows, columns } = read;
  const scanned = sql.scanEventRows(rows, first, sql.valueRowForm(columns, JSON_MEMBERS));
  // A page cut by bytes is a full page: what follows it settles a bad row in it.
  const from = sql.turnEndLookup(scanned, cut ? scanned.count : take);
  const next =
    from === undefined
      ? undefined
      : await queries.first(c, "nextTurnEnd", { sessionId: id, fromSeq: from });
  const framed = sql.judgeEventRows(scanned, sql.eventsOf(id, location), next?.seq);
  return cut ? { ...framed, cut: true } : framed;
}

/**
 * A page bounded by bytes and the header in one statement (one snapshot, one round trip, no
 * transaction), as {@link frameRows} frames it with `maxBytes`; undefined when the statement
 * cannot answer alone: no row at `first` (no session, nothing from `first` on, a hole: no header
 * came), or a bad row that needs the lookup of a later turn/end. The caller then reads in a read
 * transaction.
 * @throws StorageError FORMAT_UNSUPPORTED, CORRUPT_LOG (a bad row before a turn/end in the page).
 */
export async function pageWithHeader(
  queries: Queries,
  c: PoolClient,
  location: string,
  id: string,
  first: number,
  take: number | undefined,
  maxBytes: number,
  proof: number,
): Promise<{ header: SessionHeader; framed: sql.FramedLog & { cut?: true } } | undefined> {
  const { read, cut, headerText } = await readPageWithin(
    queries,
    c,
    id,
    first,
    take,
    maxBytes,
    proof,
  );
  if (headerText === undefined) return undefined;
  const header = sql.readHeader(JSON.parse(headerText) as sql.HeaderRow, id, location);
  const form = sql.valueRowForm(read.columns, JSON_MEMBERS);
  const scanned = sql.scanEventRows(read.rows, first, form);
  if (sql.turnEndLookup(scanned, cut ? scanned.count : take) !== undefined) return undefined;
  const framed = sql.judgeEventRows(scanned, sql.eventsOf(id, location));
  return { header, framed: cut ? { ...framed, cut: true } : framed };
}
