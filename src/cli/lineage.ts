// Renders lineage trees of listed sessions (see view/lineage-tree.ts) as JSON and as drawn lines.
import { cutToWidth, displayWidth } from "../util/text-width.js";
import type { LineageNode } from "../view/lineage-tree.js";
import { isoTime, type Palette, plural } from "./output.js";

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
