// Arranges listed sessions into lineage trees (children under their parent via parentSession) and renders them.
import type { SessionListEntry } from "../generated.js";
import type { StoreListedSession as ListedSession } from "../store/session-store.js";
import { cutToWidth, displayWidth } from "../util/text-width.js";
import { isoTime, type Palette, plural } from "./output.js";

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
};

/** A tree as JSON, with times as ISO 8601 strings (as `session/list` gives `updatedAt`). */
export function lineageJson(node: LineageNode): LineageJson {
  const { header, eventCount, updatedAt, title } = node.session;
  return {
    sessionId: header.id,
    ...(header.cwd === undefined ? {} : { cwd: header.cwd }),
    ...(title === undefined ? {} : { title }),
    createdAt: isoTime(header.createdAt),
    ...(updatedAt === undefined ? {} : { updatedAt }),
    eventCount,
    header,
    children: node.children.map(lineageJson),
  };
}

/**
 * The lines of a tree, drawn with box characters: each session's id, its event count (with the
 * inherited part), its creation time, its cwd where it differs from its parent's, and its title
 * cut to `width` columns (uncut without a width). A root forked from a session that is not listed
 * says so.
 */
export function renderLineage(
  roots: readonly LineageNode[],
  paint: Palette,
  width?: number,
): string[] {
  const lines: string[] = [];
  const draw = (node: LineageNode, lead: string, branch: string, parent?: LineageNode) => {
    const { header, eventCount } = node.session;
    const seed = header.seedLength ?? 0;
    const counts = `${plural(eventCount, "event")}${seed > 0 ? ` (${seed} inherited)` : ""}`;
    const parentCwd = parent?.session.header.cwd;
    const cwd = header.cwd !== undefined && header.cwd !== parentCwd ? `  ${header.cwd}` : "";
    const orphan =
      parent === undefined && header.parentSession !== undefined
        ? paint.dim(`  (forked from ${header.parentSession}, not listed)`)
        : "";
    const line = `${paint.dim(lead + branch)}${paint.bold(header.id)}  ${counts}  ${paint.dim(isoTime(header.createdAt))}${paint.cyan(cwd)}${orphan}`;
    lines.push(line + titled(node.session.title, displayWidth(line), width));
    const childLead = lead + (branch === "├─ " ? "│  " : branch === "└─ " ? "   " : "");
    node.children.forEach((child, i) => {
      draw(child, childLead, i === node.children.length - 1 ? "└─ " : "├─ ", node);
    });
  };
  for (const root of roots) draw(root, "", "");
  return lines;
}

/**
 * The title at the end of a line already `used` columns wide: two spaces and the title, cut to
 * what is left of `width` (nothing when less than a few columns are left).
 */
function titled(title: string | undefined, used: number, width: number | undefined): string {
  if (title === undefined) return "";
  if (width === undefined) return `  ${title}`;
  const room = width - used - 2;
  return room < MIN_TITLE_COLUMNS ? "" : `  ${cutToWidth(title, room)}`;
}

/** A title cut to fewer columns than this tells nothing: it is left out. */
const MIN_TITLE_COLUMNS = 8;

function byCreation(a: LineageNode, b: LineageNode): number {
  const x = a.session.header;
  const y = b.session.header;
  return x.createdAt - y.createdAt || (x.id < y.id ? -1 : x.id > y.id ? 1 : 0);
}
