// The JSON the viewer's HTTP API answers (docs/viewer.md, "HTTP API"), as the app reads it.
import type {
  ReplayEntry,
  SessionHeader,
  SessionListEntry,
  SessionSearchResult,
} from "../../generated.js";
import type { ViewItem } from "../../view/view-items.js";

export type { ReplayEntry, SessionHeader, SessionSearchResult, ViewItem };

/** One listed session: exactly what the RPC `session/list` answers for it. */
export type ViewSession = SessionListEntry;

/** A node of a lineage tree: a listed session, its creation time and the sessions forked from it. */
export type LineageNode = SessionListEntry & {
  /** ISO 8601. */
  readonly createdAt: string;
  readonly children: readonly LineageNode[];
  /** For a fork: the turn its seed ends after. */
  readonly branchTurn?: number;
};

export interface SessionsPage {
  readonly sessions: readonly ViewSession[];
  readonly nextCursor?: string;
}

export interface SessionDetail {
  readonly session: ViewSession;
  readonly header: SessionHeader;
  readonly lineage: LineageNode;
}

/** One page of the timeline: the view items of the events `fromSeq` to `nextSeq - 1`. */
export interface TimelinePage {
  readonly items: readonly ViewItem[];
  readonly fromSeq: number;
  readonly nextSeq: number;
  readonly length?: number;
  readonly done: boolean;
}

export interface TurnIndex {
  readonly turns: readonly {
    readonly turn: number;
    readonly seq: number;
    readonly endSeq?: number;
    readonly reason?: string;
  }[];
}

export interface EventsPage {
  readonly events: readonly unknown[];
  readonly nextSeq: number;
  readonly done: boolean;
}

export interface ReplayScript {
  readonly sessionId: string;
  readonly seedLength: number;
  readonly entries: readonly ReplayEntry[];
}

export interface ComparePage {
  readonly parentId: string;
  readonly boundary: number;
  readonly parent: {
    readonly items: readonly ViewItem[];
    readonly nextSeq: number;
    readonly done: boolean;
  };
  readonly child: {
    readonly items: readonly ViewItem[];
    readonly nextSeq: number;
    readonly done: boolean;
  };
}

/** What the HTML export embeds in `#seedline-data`. */
export interface StaticData {
  readonly session: ViewSession;
  readonly header: SessionHeader;
  readonly lineage: LineageNode;
  readonly timeline: { readonly items: readonly ViewItem[] };
  readonly replay?: ReplayScript;
}
