// One handler per method of the table, over SessionStore and replay; each receives params its validator accepted.
import { randomUUID } from "node:crypto";
import { InvalidEventError, SeedlineError } from "../errors.js";
import {
  RPC_METHOD,
  RPC_METHOD_NAMES,
  type RpcMethodName,
  type RpcParams,
  type RpcResult,
  SESSION_FORMAT_VERSION,
  type SessionEvent,
  type SessionUpdateParams,
  SQLITE_LAYOUT_VERSION,
} from "../generated.js";
import type { AcpUpdateOptions } from "../log/acp-updates.js";
import { TurnRecorder } from "../recorder/turn-recorder.js";
import { ReplayModel } from "../replay/replay-model.js";
import { storedSessionScript, storedSessionScripts } from "../replay/store-scripts.js";
import { listEntryOf } from "../store/listing/list-entry.js";
import type { Session, SessionStore } from "../store/session-store.js";
import { sendAcpHistory } from "./acp-load.js";
import { checkFits } from "./frame-limit.js";
import type { ImportUploads } from "./import-uploads.js";
import type { OpenReplays } from "./open-replays.js";
import { packageInfo } from "./package-info.js";
import { exportFrom, readAnswer, wholeExport } from "./pages.js";
import type { ConnectionWatches } from "./watches.js";

/** Runs one method: `params` already passed the method's params validator. */
export type MethodHandler<M extends RpcMethodName> = (
  params: RpcParams<M>,
) => Promise<RpcResult<M>>;

/** A handler for every method of the table, keyed by wire name. */
export type MethodHandlers = { readonly [M in RpcMethodName]: MethodHandler<M> };

/** What the handlers work on: one server's store and open replays. */
export interface HandlerContext {
  readonly store: SessionStore;
  /** The store kind `initialize` reports (the scheme of the store URL). */
  readonly storeKind: string;
  /** The open replays of this server's connection, by replay id. */
  readonly replays: OpenReplays;
  /** The watches of this server's connection. */
  readonly watches: ConnectionWatches;
  /** The session/import uploads in parts this server's connection holds. */
  readonly uploads: ImportUploads;
  /** Sends one session/update notification; resolves once the transport has written it. */
  readonly sendUpdate: (params: SessionUpdateParams) => Promise<void>;
  /** How session/load maps events to ACP updates (the tool presenter). */
  readonly acpOptions?: AcpUpdateOptions;
}

/** The ACP protocol version the handshake answers with. */
const ACP_PROTOCOL_VERSION = 1;

/**
 * The handlers of every method over `context`. Each throws `SeedlineError`s for the failures its
 * method lists in the table; the dispatcher maps them.
 */
export function createHandlers(context: HandlerContext): MethodHandlers {
  const { store, replays, watches, uploads } = context;
  // One recorder per live session object: an unloaded session's recorder goes with it, and a
  // recorder re-reads the log whenever it does not end where the recorder left it.
  const recorders = new WeakMap<Session, TurnRecorder>();

  return {
    [RPC_METHOD.initialize]: async () => ({
      protocolVersion: ACP_PROTOCOL_VERSION,
      agentInfo: { name: "seedline", version: packageInfo().version },
      authMethods: [],
      agentCapabilities: {
        loadSession: true,
        sessionCapabilities: { list: {}, fork: {}, delete: {} },
        _meta: {
          seedline: {
            formatVersion: SESSION_FORMAT_VERSION,
            sqliteSchemaVersion: SQLITE_LAYOUT_VERSION,
            store: context.storeKind,
            methods: [...RPC_METHOD_NAMES],
          },
        },
      },
    }),

    [RPC_METHOD.sessionCreate]: async (params) => {
      const meta = { ...params.meta, ...pick(params, ["cwd"]) };
      // The log checks every seed event; the params schema only checked that each is an object.
      const seed = params.seed as readonly SessionEvent[] | undefined;
      const id = params.sessionId === undefined ? {} : { id: params.sessionId };
      const session = await withEventPaths("seed", () =>
        store.create(seed === undefined ? { ...id, meta } : { ...id, seed, meta }),
      );
      return { sessionId: session.id, header: session.header };
    },

    [RPC_METHOD.sessionNew]: async (params) => {
      const session = await store.create({ meta: { cwd: params.cwd } });
      return { sessionId: session.id };
    },

    [RPC_METHOD.sessionAppend]: async (params) => {
      const nextSeq = await withEventPaths("events", () =>
        // The params are this request's own parsed JSON: frozen in place, not copied again.
        store.append(params.sessionId, params.events, { parsed: true }),
      );
      return { nextSeq };
    },

    [RPC_METHOD.sessionOpen]: async (params) => {
      const { session, repaired } = await store.open(params.sessionId);
      const openTurn = session.openTurn;
      return {
        nextSeq: session.nextSeq,
        ...(openTurn === undefined ? {} : { openTurn }),
        repaired,
      };
    },

    [RPC_METHOD.sessionFork]: async (params) => {
      const header = await store.fork(params.sessionId, {
        boundary: params.boundary,
        childSessionId: params.childSessionId,
        ...pick(params, ["cwd"]),
      });
      return { sessionId: header.id, header };
    },

    // The cwd is the client's for this load; nothing is stored, so a session without one loads too.
    [RPC_METHOD.sessionLoad]: async (params) =>
      sendAcpHistory(store, params.sessionId, context.sendUpdate, context.acpOptions),

    [RPC_METHOD.sessionRead]: async (params) =>
      readAnswer(store, params.sessionId, params.fromSeq ?? 0, params.limit),

    [RPC_METHOD.sessionList]: async (params) => {
      const page = await store.list(
        pick(params, ["cwd", "parentSession", "cursor", "limit", "order"]),
      );
      return {
        sessions: page.sessions.map(listEntryOf),
        ...(page.nextCursor === undefined ? {} : { nextCursor: page.nextCursor }),
      };
    },

    [RPC_METHOD.sessionSearch]: async (params) =>
      store.search(pick(params, ["query", "cwd", "cursor", "limit"])),

    [RPC_METHOD.sessionMessages]: async (params) => {
      const session = await store.load(params.sessionId);
      const through = params.throughSeq;
      if (through !== undefined && through >= session.nextSeq) {
        const message = `expected a throughSeq below ${session.nextSeq} (the session's length), got ${through}`;
        throw new SeedlineError("INVALID_PARAMS", message, {
          errors: [{ instancePath: "/throughSeq", message }],
        });
      }
      const messages =
        through === undefined ? session.deriveMessages() : await session.deriveMessages(through);
      // Measured one message at a time: big tool outputs can make an answer past any string.
      checkFits(messages, "a session/messages answer");
      return { messages };
    },

    [RPC_METHOD.sessionExport]: async (params) =>
      params.fromSeq === undefined
        ? wholeExport(store, params.sessionId)
        : exportFrom(store, params.sessionId, params.fromSeq),

    [RPC_METHOD.sessionImport]: async (params) => {
      const { importId } = params;
      if (params.more === true && importId !== undefined) {
        // Held synchronously, before any await: parts are added in the order they arrive.
        return uploads.add(importId, params.log);
      }
      const text = importId === undefined ? params.log : uploads.take(importId, params.log);
      const format = params.format ?? "seedline";
      if (format === "seedline") {
        const header = await store.importLog(text, pick(params, ["sessionId"]));
        return { sessionId: header.id, header };
      }
      if (params.sessionId !== undefined) {
        const message = `expected no sessionId with format ${format} (a transcript's sessions are named by the tool's session id), got ${JSON.stringify(params.sessionId)}`;
        throw new SeedlineError("INVALID_PARAMS", message, {
          errors: [{ instancePath: "/sessionId", message }],
        });
      }
      // Loaded on the first transcript import: a server that never imports one does not load
      // the transcript mappers at start.
      const { importTranscript } = await import("../import/import-transcript.js");
      return importTranscript(store, text, { format, ...pick(params, ["path", "strict"]) });
    },

    [RPC_METHOD.sessionDelete]: async (params) => {
      await store.delete(params.sessionId);
      return {};
    },

    [RPC_METHOD.sessionSetTitle]: async (params) => {
      await store.setTitle(params.sessionId, params.title);
      return {};
    },

    [RPC_METHOD.sessionRecord]: async (params) => {
      const session = await store.openForWriting(params.sessionId);
      let recorder = recorders.get(session);
      if (recorder === undefined) {
        recorder = new TurnRecorder(session);
        recorders.set(session, recorder);
      }
      return recorder.record(params.ops);
    },

    [RPC_METHOD.replayScript]: async (params) => {
      const script = await storedSessionScript(store, params.sessionId);
      return {
        sessionId: script.sessionId,
        seedLength: script.seedLength,
        entries: script.entries,
      };
    },

    [RPC_METHOD.replayScripts]: async (params) => ({
      scripts: await storedSessionScripts(store, params.sessionId),
    }),

    [RPC_METHOD.replayOpen]: async (params) => {
      replays.checkRoom();
      const replay = await ReplayModel.fromStore(
        store,
        params.sessionId,
        pick(params, ["overrides"]),
      );
      const replayId = randomUUID();
      replays.add(replayId, replay);
      return { replayId, scripts: replay.scripts.length };
    },

    [RPC_METHOD.replayNext]: async (params) =>
      replays.use(params.replayId).next(params.callerSessionId),

    [RPC_METHOD.replayClose]: async (params) => {
      replays.delete(params.replayId);
      return {};
    },

    [RPC_METHOD.sessionWatch]: async (params) => watches.start(params),

    [RPC_METHOD.sessionUnwatch]: async (params) => {
      watches.stop(params.watchId);
      return {};
    },
  } satisfies MethodHandlers;
}

/**
 * The members `keys` of `value` that are present: copies optional params into options objects
 * without writing `undefined` into them (and leaves out whatever else an open params object holds).
 */
function pick<T extends object, K extends keyof T>(value: T, keys: readonly K[]): Pick<T, K> {
  const picked: Partial<Pick<T, K>> = {};
  for (const key of keys) if (value[key] !== undefined) picked[key] = value[key];
  return picked as Pick<T, K>;
}

/**
 * Runs `operation`, re-pointing an `INVALID_EVENT` at its place in the params: the log reports
 * the event's index and a path inside the event, the client sent `/<member>/<index>/…`.
 */
async function withEventPaths<T>(
  member: "events" | "seed",
  operation: () => Promise<T>,
): Promise<T> {
  try {
    return await operation();
  } catch (error) {
    if (!(error instanceof InvalidEventError)) throw error;
    const instancePath = `/${member}/${error.index}${error.details.instancePath ?? ""}`;
    const problems = error.problems.map((p) => ({
      ...p,
      instancePath: `/${member}/${p.index}${p.instancePath}`,
    }));
    throw new InvalidEventError(
      "INVALID_EVENT",
      error.message,
      { ...error.details, instancePath, problems },
      { cause: error },
    );
  }
}
