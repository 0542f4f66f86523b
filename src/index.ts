// The public entry of the seedline package: what a user calls, listed on purpose and kept short.
// Everything else is internal: the CLI, the server and the tests reach it by its module's path.
// docs/api-report.md records each name with its signature; `npm run api-report -- --check` fails on a change.

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
// Errors: every one a SeedlineError with a literal code; match with hasCode.
export {
  type CodedError,
  type ErrorDetails,
  errorCode,
  type ForkErrorCode,
  hasCode,
  InvalidEventError,
  type InvalidEventProblem,
  type InvariantRule,
  type LocalErrorCode,
  RecordError,
  type RefusalCondition,
  ReplayError,
  type ReplayErrorCode,
  SeedlineError,
  type SeedlineErrorCode,
  SessionForkError,
  StorageError,
  type StorageErrorCode,
  StorageRefusedError,
  StorageUnavailableError,
} from "./errors.js";
// Generated from schema/: the shapes a user stores, reads back or sends, and their validators.
// Each RPC method's params and result are RpcParams<M> and RpcResult<M>, a notification's
// params RpcNotificationParams<N>.
export type {
  AcpSessionUpdate,
  AssistantChunkData,
  AssistantChunkEvent,
  AssistantMessageData,
  AssistantMessageEvent,
  CompactEndData,
  CompactEndEvent,
  CompactStartData,
  CompactStartEvent,
  CompactSummaryData,
  CompactSummaryEvent,
  ContentBlock,
  ContextMessageData,
  ContextMessageEvent,
  CreateSessionMeta,
  CreateSessionOptions,
  DerivedMessage,
  FinishReason,
  ForeignRecordData,
  ForeignRecordEvent,
  HookInvokedData,
  HookInvokedEvent,
  HookResultData,
  HookResultEvent,
  ImportedTranscriptSession,
  MessageSource,
  ModelRequest,
  ModelResponse,
  PromptBlockedData,
  PromptBlockedEvent,
  ReasoningBlock,
  RecordOp,
  ReplayEntry,
  ReplayNextResult,
  RpcErrorCode,
  RpcMethodName,
  RpcNotificationName,
  RpcNotificationParams,
  RpcParams,
  RpcResult,
  SessionEvent,
  SessionHeader,
  SessionHeaderLine,
  SessionRecordResult,
  SessionScript,
  SessionSearchResult,
  SteeringMessageData,
  SteeringMessageEvent,
  StepEndData,
  StepEndEvent,
  StepStartData,
  StepStartEvent,
  StreamChunk,
  SurfaceOp,
  TextBlock,
  TodoWriteData,
  TodoWriteEvent,
  TokenUsage,
  ToolCallBlock,
  ToolCallData,
  ToolCallEvent,
  ToolError,
  ToolResultBlock,
  ToolResultData,
  ToolResultEvent,
  TranscriptFormat,
  TranscriptImported,
  TranscriptLineCounts,
  TranscriptLineProblem,
  TurnEndData,
  TurnEndEvent,
  TurnEndReason,
  TurnStartData,
  TurnStartEvent,
  TurnTrigger,
  UserMessageData,
  UserMessageEvent,
} from "./generated.js";
export {
  type EventType,
  type SurfaceEligibleType,
  type Validator,
  validateSessionEvent,
  validateSessionHeader,
  validateSessionHeaderLine,
  validateSessionScript,
} from "./generated.js";
export { detectTranscriptFormat } from "./import/detect.js";
export {
  type ImportTranscriptOptions,
  importTranscript,
  mapTranscript,
  type TranscriptOptions,
} from "./import/import-transcript.js";
export {
  importedSessionId,
  type MappedSession,
  type MappedTranscript,
} from "./import/transcript.js";
// ACP: a session's events as Agent Client Protocol updates, for a harness's own ACP agent.
export {
  type AcpToolPresentation,
  type AcpToolPresenter,
  type AcpUpdateOptions,
  acpToolCallId,
  acpUpdatesOf,
  defaultToolPresentation,
  toAcpUpdates,
} from "./log/acp-updates.js";
// The log's pure rules, for code that holds events of its own.
export { lastCompletedTurnBoundary } from "./log/fork-rules.js";
export type { TurnMarker } from "./log/invariants.js";
export { interruptedTurnClosers } from "./log/repair.js";
export type { SerializedEvent } from "./log/serialized-event.js";
export { deriveMessages, isSurfaceEligibleType } from "./log/surface.js";
export type { EventOf } from "./log/types.js";
export {
  type ProxyServer,
  type ProxyServerOptions,
  startProxyServer,
} from "./proxy/proxy-server.js";
export {
  type SeedlineFetch,
  type SeedlineFetchOptions,
  seedlineFetch,
} from "./proxy/seedline-fetch.js";
export type { ProxyMode } from "./proxy/types.js";
// Recording an agent: turn by turn in code, or at its model API (in process, or as a local server).
export {
  type FinishedStep,
  RecordedStep,
  RecordedTurn,
  type ToolResultOptions,
  TurnRecorder,
  type TurnRecorderOptions,
} from "./recorder/turn-recorder.js";
// Replaying recorded model responses.
export {
  deriveReplayScript,
  type EnactOptions,
  enactEntry,
  RecordedModelError,
  ReplayModel,
  replayProblems,
  type StoredScriptsOptions,
  storedSessionScript,
  type UnservedScript,
} from "./replay/index.js";
export type { Framing } from "./rpc/framing.js";
// The JSON-RPC server in process, and the typed client of a server.
export { type RpcServer, type ServeOptions, serve } from "./rpc/server.js";
// Writing a backend of your own (proved by `seedline/testing`): the interface and what its members take and give.
export type {
  Durability,
  IdMatches,
  ListedSession,
  ListOrder,
  ListPage,
  ListQuery,
  ReleaseLock,
  SearchHit,
  SearchPage,
  SearchQuery,
  SessionBackend,
  SessionCatalog,
  StoredForkPoint,
  StoredLog,
  StoredSettledPage,
  StoredSuffix,
  StoredTitles,
  Unsubscribe,
} from "./store/backend.js";
export { JsonlBackend, type JsonlBackendOptions } from "./store/jsonl/jsonl-backend.js";
// The catalog a backend without one gets, to extend (a search index of its own) or to test against.
export { ScanCatalog } from "./store/listing/scan-catalog.js";
export type { SearchOptions } from "./store/listing/search.js";
export { MemoryBackend } from "./store/memory/memory-backend.js";
// Opening a store: by URL, or one backend by its class. SQLite and PostgreSQL are loaded (with
// better-sqlite3 and pg) only when a store of their kind is opened.
export {
  type OpenBackendOptions,
  openBackend,
  PostgresBackend,
  SqliteBackend,
} from "./store/open/open-backend.js";
export type { PostgresBackendOptions } from "./store/postgres/postgres-backend.js";
export type { PostgresTimeouts } from "./store/postgres/timeouts.js";
// The store and its sessions: create, append, read, fork, list, search, watch.
export type { EventPage, ReadOptions } from "./store/reads/event-pages.js";
export {
  type AppendOptions,
  type EventRange,
  type ForkOptions,
  type OpenedSession,
  Session,
  type SessionHost,
  SessionStore,
  type SessionStoreOptions,
  type StoreListedSession,
  type StoreListPage,
} from "./store/session-store.js";
export type { SqliteBackendOptions } from "./store/sqlite/sqlite-backend.js";
export { SessionWatch, type WatchBatch, type WatchOptions } from "./store/watch/session-watch.js";
