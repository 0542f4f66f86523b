// The public entry of the seedline package.

export {
  ClientWatch,
  type ClientWatchOptions,
} from "./client/client-watches.js";
export {
  ConnectionClosedError,
  RequestTooLargeError,
  RpcResponseError,
  type RpcResponseErrorData,
} from "./client/rpc-response-error.js";
export {
  type ConnectOptions,
  SeedlineClient,
  type ServerExit,
  type SpawnOptions,
} from "./client/seedline-client.js";
export * from "./errors.js";
export * from "./generated.js";
export {
  lastCompletedTurnBoundary,
  lastTurnMarkerAt,
  resolveForkBoundary,
} from "./log/fork-rules.js";
export type { TurnMarker } from "./log/invariants.js";
export { isInterruptedResult } from "./log/invariants.js";
export { copyJsonValue, MAX_JSON_DEPTH } from "./log/json-value.js";
export { INTERRUPTED_RESULT_TEXT, interruptedTurnClosers } from "./log/repair.js";
export { foldForSearch, searchableText, searchTerms } from "./log/search-text.js";
export { type PreparedBatch, SessionLog } from "./log/session-log.js";
export { deriveMessages, isSurfaceEligibleType, messageOf, Surface } from "./log/surface.js";
export type { EventOf, SurfaceEvent } from "./log/types.js";
export {
  type FinishedStep,
  RecordedStep,
  RecordedTurn,
  type ToolResultOptions,
  TurnRecorder,
  type TurnRecorderOptions,
} from "./recorder/turn-recorder.js";
export * from "./replay/index.js";
export {
  INTERNAL_MESSAGE,
  ProtocolError,
  toResponseError,
  type WireErrorData,
} from "./rpc/error-mapping.js";
export { PAGE_BYTES } from "./rpc/frame-limit.js";
export { FRAMINGS, type Framing } from "./rpc/framing.js";
export { DEFAULT_IDLE_MS } from "./rpc/idle-sessions.js";
export {
  FramingError,
  MAX_MESSAGE_BYTES,
  NdjsonMessageReader,
  NdjsonMessageWriter,
} from "./rpc/ndjson-framing.js";
export { DEFAULT_MAX_IN_FLIGHT } from "./rpc/read-gate.js";
export { type RpcServer, type ServeOptions, serve } from "./rpc/server.js";
export { DEFAULT_WATCH_BUFFER_EVENTS } from "./rpc/watches.js";
export type * from "./store/backend.js";
export { ChangeHub, type ChangeHubHooks } from "./store/change-hub.js";
export {
  DEFAULT_READ_LIMIT,
  type EventPage,
  MAX_READ_LIMIT,
  type ReadOptions,
} from "./store/event-pages.js";
export { JsonlBackend, type JsonlBackendOptions } from "./store/jsonl/jsonl-backend.js";
export { DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT } from "./store/list-limit.js";
export { MemoryBackend } from "./store/memory-backend.js";
export {
  DEFAULT_STORE_URL,
  type OpenBackendOptions,
  openBackend,
  STORE_URL_FORMS,
} from "./store/open-backend.js";
export {
  PostgresBackend,
  type PostgresBackendOptions,
} from "./store/postgres/postgres-backend.js";
export { DEFAULT_TIMEOUTS, type PostgresTimeouts } from "./store/postgres/timeouts.js";
export { DEFAULT_SEARCH_LIMIT, type SearchOptions } from "./store/search.js";
export {
  type AppendOptions,
  DEFAULT_MAX_WRITER_LOCKS,
  type EventRange,
  type ForkOptions,
  Session,
  SessionStore,
  type SessionStoreOptions,
  type StoreListedSession,
  type StoreListPage,
} from "./store/session-store.js";
export {
  DEFAULT_WATCH_BATCH,
  SessionWatch,
  type WatchBatch,
  type WatchOptions,
} from "./store/session-watch.js";
export { SqliteBackend, type SqliteBackendOptions } from "./store/sqlite/sqlite-backend.js";
