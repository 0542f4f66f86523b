// The SQL core both SQL backends share, imported as one namespace: framing, pages, headers, list pages, checks.
export {
  type EventRow,
  type FramedLog,
  judgeEventRows,
  LINE_ROWS,
  type RowForm,
  type ScannedRows,
  scanEventRows,
  turnEndLookup,
  valueRowForm,
} from "./event-frames.js";
export { type EventMember, eventMembers, memberValue } from "./event-members.js";
export { FramedTails } from "./framed-tails.js";
export {
  type ListRun,
  type ListStatement,
  listedHit,
  listedSession,
  listPage,
  listRun,
} from "./list-pages.js";
export { type PageRead, pageRead, rowsWithin, suffixOf, valueRowBytes } from "./log-pages.js";
export { checkBatchSeqs, checkCopiedPrefix, closedAtOf, turnMarkerOf } from "./row-checks.js";
export {
  eventsOf,
  type HeaderRow,
  headerFromRow,
  lengthAfter,
  readHeader,
  sessionWhere,
} from "./session-rows.js";
export { checkSettledCount, jsonMembers, settledEvents } from "./settled-rows.js";
export { batchTitle, derivedOf, titleOfData, titlesOf } from "./summary-rows.js";
