// The lineage tree of a session: its root ancestor and every fork below, each fork under the turn it branched after.
import type { LineageNode } from "./api-types.js";
import { plural } from "./format.js";
import { html } from "./html.js";
import { href } from "./router.js";

/** A node's children grouped by the turn they branched after, in turn order (unknown last). */
function byBranchTurn(children: readonly LineageNode[]): [number | undefined, LineageNode[]][] {
  const groups = new Map<number | undefined, LineageNode[]>();
  for (const child of children) {
    const list = groups.get(child.branchTurn) ?? [];
    list.push(child);
    groups.set(child.branchTurn, list);
  }
  return [...groups].sort(([a], [b]) => (a ?? Infinity) - (b ?? Infinity));
}

/** A tree's node; in an export (`offline`) only the exported session is there to open. */
function Node({
  node,
  current,
  offline,
}: {
  node: LineageNode;
  current: string;
  offline: boolean;
}) {
  const id = node.sessionId;
  const path = `/s/${encodeURIComponent(id)}`;
  const isFork = node.header.seedLength !== undefined;
  const isChild = !isFork && node.header.parentSession !== undefined;
  return html`<li class="lineage-item">
    <div class=${`lineage-node${id === current ? " current" : ""}`} data-testid="lineage-node" data-id=${id}>
      ${offline ? html`<span class="id">${id}</span>` : html`<a href=${href(path)} data-route=${path}>${id}</a>`}
      ${node.title && html`<span class="title">${node.title}</span>`}
      <span class="muted">${plural(node.eventCount, "event")}</span>
      ${isFork && html`<span class="badge fork" data-testid="seed-length">seed ${node.header.seedLength}</span>`}
      ${isChild && html`<span class="badge">spawned</span>`}
    </div>
    ${
      node.children.length > 0 &&
      html`<ul class="lineage-children">
        ${byBranchTurn(node.children).map(
          ([
            turn,
            forks,
          ]) => html`<li class="branch-group" data-testid="branch-group" data-turn=${turn}>
            <div class="muted branch-label">${turn === undefined ? "children" : `forks after turn ${turn}`}</div>
            <ul>${forks.map((f) => html`<${Node} key=${f.sessionId} node=${f} current=${current} offline=${offline} />`)}</ul>
          </li>`,
        )}
      </ul>`
    }
  </li>`;
}

/** The whole tree the current session belongs to, the current one marked. */
export function Lineage(props: { root: LineageNode; current: string; offline: boolean }) {
  const { root, current, offline } = props;
  return html`<div class="lineage" data-testid="lineage">
    <ul class="lineage-root"><${Node} node=${root} current=${current} offline=${offline} /></ul>
  </div>`;
}
