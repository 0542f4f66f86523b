// A fork beside its parent from the seed boundary on: what the child did differently.
import { useEffect, useState } from "preact/hooks";
import type { ComparePage, ViewItem } from "./api-types.js";
import { html } from "./html.js";
import { RowView } from "./items.js";
import { href } from "./router.js";
import { type DataSource, errorText } from "./source.js";
import { PAGE_EVENTS } from "./timeline.js";
import { joinPages, rowsOf } from "./timeline-model.js";

interface Column {
  readonly items: readonly ViewItem[];
  readonly nextSeq: number;
  readonly done: boolean;
}

function Side(props: {
  source: DataSource;
  id: string;
  label: string;
  testid: string;
  column: Column;
  onMore: () => void;
}) {
  const { source, id, label, testid, column, onMore } = props;
  const ctx = { source, sessionId: id, seedLength: 0 };
  const path = `/s/${encodeURIComponent(id)}`;
  return html`<section class="compare-side" data-testid=${testid}>
    <h3>${label} <a href=${href(path)} data-route=${path}>${id}</a></h3>
    <div class="timeline">
      ${rowsOf(column.items).map((row) => html`<${RowView} row=${row} ctx=${ctx} />`)}
      ${column.items.length === 0 && html`<div class="muted">nothing after the boundary</div>`}
    </div>
    ${!column.done && html`<button type="button" onClick=${onMore}>more from ${column.nextSeq}</button>`}
  </section>`;
}

export function Compare({ source, id }: { source: DataSource; id: string }) {
  const [page, setPage] = useState<ComparePage | undefined>();
  const [error, setError] = useState<string | undefined>();
  useEffect(() => {
    setPage(undefined);
    source.compare(id).then(setPage, (e: unknown) => setError(errorText(e)));
  }, [source, id]);
  if (error !== undefined) return html`<div class="error" data-testid="error">${error}</div>`;
  if (page === undefined) return html`<div class="muted">loading…</div>`;
  const more = (side: "parent" | "child") => () => {
    const column = page[side];
    const sessionId = side === "parent" ? page.parentId : id;
    source.timeline(sessionId, column.nextSeq, PAGE_EVENTS).then(
      (next) =>
        setPage((old) =>
          old === undefined
            ? old
            : {
                ...old,
                [side]: {
                  items: joinPages(old[side].items, next.items),
                  nextSeq: next.nextSeq,
                  done: next.done,
                },
              },
        ),
      (e: unknown) => setError(errorText(e)),
    );
  };
  return html`<div class="compare" data-testid="compare">
    <p class="muted">Both logs from the seed boundary on (seq ${page.boundary}): the parent went on one way, this fork another.</p>
    <div class="compare-cols">
      <${Side} source=${source} id=${page.parentId} label="parent" testid="compare-parent" column=${page.parent} onMore=${more("parent")} />
      <${Side} source=${source} id=${id} label="this fork" testid="compare-child" column=${page.child} onMore=${more("child")} />
    </div>
  </div>`;
}
