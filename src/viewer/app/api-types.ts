// The JSON the viewer's HTTP API answers (docs/viewer.md, "HTTP API"), named by the types the server and the view model declare.
import type {
  ReplayEntry,
  ReplayScriptResult,
  SessionHeader,
  SessionListEntry,
  SessionSearchResult,
} from "../../generated.js";
import type { LineageJson } from "../../view/lineage-tree.js";
import type { ViewItem, ViewPage } from "../../view/view-items.js";
import type { Comparison, RawPage, TurnEntry } from "../server/session-views.js";

export type { ReplayEntry, SessionHeader, SessionSearchResult, ViewItem };

/** One listed session: exactly what the RPC `session/list` answers for it. */
export type ViewSession = SessionListEntry;

/** A node of a lineage tree: a listed session, its creation time, its forks and where they branched. */
export type LineageNode = LineageJson;

/** `GET /api/sessions`: one page of listed sessions. */
export interface SessionsPage {
  readonly sessions: readonly ViewSession[];
  readonly nextCursor?: string;
}

/** `GET /api/sessions/:id`: the session, its header, and the lineage tree it belongs to. */
export interface SessionDetail {
  readonly session: ViewSession;
  readonly header: SessionHeader;
  readonly lineage: LineageNode;
}

/** `GET /api/sessions/:id/timeline`: the view items of the events `fromSeq` to `nextSeq - 1`. */
export type TimelinePage = ViewPage;

/** `GET /api/sessions/:id/turns`: where each turn starts (and ends). */
export interface TurnIndex {
  readonly turns: readonly TurnEntry[];
}

/** `GET /api/sessions/:id/events`: raw events, as stored. */
export type EventsPage = RawPage;

/** `GET /api/sessions/:id/replay`: the session's replay script. */
export type ReplayScript = ReplayScriptResult;

/** `GET /api/sessions/:id/compare`: a fork and its parent from the boundary on, a page of each. */
export type ComparePage = Comparison;

/** What the HTML export embeds in `#seedline-data`. */
export interface StaticData {
  readonly session: ViewSession;
  readonly header: SessionHeader;
  readonly lineage: LineageNode;
  readonly timeline: { readonly items: readonly ViewItem[] };
  readonly replay?: ReplayScript;
  /** Why the session has no replay script (say, REPLAY_INCOMPLETE), when it has none. */
  readonly replayError?: { readonly code: string; readonly message: string };
}
