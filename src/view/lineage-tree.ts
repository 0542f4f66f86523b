// Arranges listed sessions into lineage trees: children under their parent via parentSession.
import type { SessionListEntry } from "../generated.js";
import type { StoreListedSession as ListedSession } from "../store/session-store.js";

/** A listed session with the sessions forked (or spawned) from it. */
export interface LineageNode {
  readonly session: ListedSession;
  readonly children: LineageNode[];
}

/**
 * The trees of `sessions`: a session whose `parentSession` is among them hangs under it, the
 * others are roots. Roots keep the input order (the store lists newest first); children are
 * ordered by `createdAt`, then id, the order in which they were made. Sessions whose
 * `parentSession` links form a cycle (possible through import) become roots where the cycle is
 * entered, so every session appears exactly once.
 */
export function lineageTrees(sessions: readonly ListedSession[]): LineageNode[] {
  const nodes = new Map<string, LineageNode>();
  for (const session of sessions) nodes.set(session.header.id, { session, children: [] });
  const roots: LineageNode[] = [];
  const placed = new Set<string>();
  for (const node of nodes.values()) {
    const parent = node.session.header.parentSession;
    const parentNode = parent === undefined ? undefined : nodes.get(parent);
    if (parentNode === undefined || parent === node.session.header.id) roots.push(node);
    else parentNode.children.push(node);
  }
  for (const node of nodes.values()) node.children.sort(byCreation);
  const visit = (node: LineageNode) => {
    placed.add(node.session.header.id);
    for (const child of node.children) visit(child);
  };
  for (const root of roots) visit(root);
  // What is left hangs on a parent cycle: break each cycle at the first member in list order.
  for (const session of sessions) {
    const node = nodes.get(session.header.id) as LineageNode;
    if (placed.has(session.header.id)) continue;
    const parent = nodes.get(session.header.parentSession as string) as LineageNode;
    parent.children.splice(parent.children.indexOf(node), 1);
    roots.push(node);
    visit(node);
  }
  return roots;
}

/**
 * The JSON form of a tree: each session as `session/list` gives it, plus its creation time (ISO
 * 8601) and its children nested.
 */
export type LineageJson = SessionListEntry & {
  readonly createdAt: string;
  readonly children: LineageJson[];
  /** For a fork: the turn its seed ends after (the turn of its last inherited event), when known. */
  readonly branchTurn?: number;
};

/**
 * A tree as JSON, with times as ISO 8601 strings (as `session/list` gives `updatedAt`), and each
 * fork's `branchTurn` when `branchTurns` knows it (by session id).
 */
export function lineageJson(
  node: LineageNode,
  branchTurns: ReadonlyMap<string, number> = new Map(),
): LineageJson {
  const { header, eventCount, updatedAt, title } = node.session;
  const branchTurn = branchTurns.get(header.id);
  return {
    sessionId: header.id,
    ...(header.cwd === undefined ? {} : { cwd: header.cwd }),
    ...(title === undefined ? {} : { title }),
    createdAt: new Date(header.createdAt).toISOString(),
    ...(updatedAt === undefined ? {} : { updatedAt }),
    eventCount,
    header,
    ...(branchTurn === undefined ? {} : { branchTurn }),
    children: node.children.map((child) => lineageJson(child, branchTurns)),
  };
}

function byCreation(a: LineageNode, b: LineageNode): number {
  const x = a.session.header;
  const y = b.session.header;
  return x.createdAt - y.createdAt || (x.id < y.id ? -1 : x.id > y.id ? 1 : 0);
}
