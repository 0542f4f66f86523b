// One row of the timeline: a turn, step, message, assembled step, tool call with its result, usage, the seed boundary.
import { useState } from "preact/hooks";
import type { ViewItem } from "./api-types.js";
import { html } from "./html.js";
import { type DataSource, errorText } from "./source.js";
import { Folded, Markdown, pretty, Usage } from "./text-views.js";
import { type Row, rowRange } from "./timeline-model.js";

/** What every row needs to know about where it is drawn. */
export interface RowContext {
  readonly source: DataSource;
  readonly sessionId: string;
  /** Events below this seq are inherited from the parent (dimmed). */
  readonly seedLength: number;
}

/** How a turn ended, when not normally: its mark (an aborted turn is one the user cancelled). */
const BAD_ENDS: Record<string, string> = {
  interrupted: "interrupted",
  aborted: "cancelled",
  error: "errored",
  rejected: "rejected",
};

function endMark(reason: string | undefined) {
  if (reason === undefined) return null;
  const bad = BAD_ENDS[reason];
  return bad === undefined
    ? html`<span class="badge">${reason}</span>`
    : html`<span class="badge bad" data-testid="turn-mark">${bad}</span>`;
}

/** The raw events of a step's chunks (or of one cut event), fetched when opened. */
function RawChunks({
  ctx,
  range,
  what = "chunks",
}: {
  ctx: RowContext;
  range: readonly [number, number];
  what?: string;
}) {
  const [events, setEvents] = useState<readonly unknown[] | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [open, setOpen] = useState(false);
  if (ctx.source.isStatic) return null;
  const toggle = () => {
    setOpen(!open);
    if (events !== undefined || open) return;
    ctx.source.events(ctx.sessionId, range[0], range[1] - range[0] + 1).then(
      (page) => setEvents(page.events),
      (e: unknown) => setError(errorText(e)),
    );
  };
  return html`<div class="raw">
    <button type="button" class="link" data-testid="raw-toggle" onClick=${toggle}>
      ${open ? "hide" : "raw"} ${what} (seq ${range[0] === range[1] ? range[0] : `${range[0]}–${range[1]}`})
    </button>
    ${
      open &&
      html`<div class="raw-events" data-testid="raw-chunks">
        ${error !== undefined && html`<div class="error">${error}</div>`}
        ${events === undefined && error === undefined && html`<div class="muted">loading…</div>`}
        ${events?.map((event) => html`<pre class="out">${JSON.stringify(event)}</pre>`)}
      </div>`
    }
  </div>`;
}

function ItemBody({ item, ctx }: { item: ViewItem; ctx: RowContext }) {
  switch (item.kind) {
    case "turn":
      return html`<div class="turn-head">
        <span class="turn-no">Turn ${item.turn}</span>
        ${item.trigger !== undefined && html`<span class="muted">${item.trigger}</span>`}
        ${endMark(item.reason)}
      </div>`;
    case "turn-end":
      return html`<div class="turn-end muted">
        end of turn ${item.turn}: ${item.reason}${item.detail ? ` — ${item.detail}` : ""}
      </div>`;
    case "step":
      return html`<div class="step muted">step ${item.step}</div>`;
    case "message":
      return html`<div class=${`msg role-${item.role}`}>
        <div class="who">${item.role}${item.source ? ` · ${item.source}` : ""}</div>
        <${Markdown} text=${item.text} />
        <${CutText} item=${item} member="text" ctx=${ctx} />
        ${item.detail !== undefined && html`<div class="muted detail">${item.detail}</div>`}
      </div>`;
    case "assistant":
      return html`<div class="msg role-assistant" data-testid="assistant">
        <div class="who">assistant${item.finish ? html` <span class="muted">· ${item.finish}</span>` : ""}</div>
        ${
          item.reasoning !== undefined &&
          item.reasoning !== "" &&
          html`<details class="reasoning" data-testid="reasoning">
            <summary>reasoning</summary>
            <pre class="out">${item.reasoning}</pre>
            <${CutText} item=${item} member="reasoning" ctx=${ctx} />
          </details>`
        }
        ${item.text !== "" && html`<${Markdown} text=${item.text} />`}
        <${CutText} item=${item} member="text" ctx=${ctx} />
        <div class="meta">
          ${item.usage && html`<${Usage} usage=${item.usage} />`}
          <${RawChunks} ctx=${ctx} range=${item.chunkSeqs} what=${item.chunkCount === 0 ? "event" : "chunks"} />
        </div>
      </div>`;
    case "usage":
      return html`<div class="meta"><${Usage} usage=${item.usage} /></div>`;
    case "seed-boundary":
      return html`<div class="seed-boundary" data-testid="seed-boundary">
        <span>seed ends: ${item.inherited} events inherited above, this session's own below</span>
      </div>`;
    case "other":
      return html`<div class="other"><span class="muted">${item.type}</span> ${item.text}</div>`;
    case "foreign":
      return html`<details class="foreign" data-testid="foreign">
        <summary>
          <span class="muted">${item.source} line ${item.line}</span>
          ${item.what !== "" && html` ${item.what}`}
        </summary>
        <pre class="out">${item.text}</pre>
        <${RawChunks} ctx=${ctx} range=${[item.seq, item.seq]} what="record" />
      </details>`;
    default:
      return null;
  }
}

/**
 * What the server cut of `item`'s `member` (a huge tool output, a huge message): how much is
 * shown, and the whole event raw one click away. Nothing when it was not cut.
 */
function CutText({ item, member, ctx }: { item: ViewItem; member: string; ctx: RowContext }) {
  const full = item.cut?.[member];
  if (full === undefined) return null;
  const shown = String((item as unknown as Record<string, unknown>)[member] ?? "").length;
  return html`<div class="cut-note" data-testid="cut-note">
    <span class="muted">cut: the first ${count(shown)} of ${count(full)} characters are shown</span>
    <${RawChunks} ctx=${ctx} range=${[item.seq, item.seq]} what="event" />
  </div>`;
}

function count(n: number): string {
  return n.toLocaleString("en");
}

function ToolRow({ row, ctx }: { row: Extract<Row, { kind: "tool" }>; ctx: RowContext }) {
  const { call, result } = row;
  return html`<div class="tool-pair" data-testid="tool-pair">
    <div class="tool-call" data-testid="tool-call">
      <div class="who">tool call · <b>${call?.name ?? result?.name ?? "?"}</b> <span class="muted">${call?.callId ?? result?.callId}</span></div>
      ${call ? html`<${Folded} text=${pretty(call.arguments)} /><${CutText} item=${call} member="arguments" ctx=${ctx} />` : html`<div class="muted">${result?.callSeq === undefined ? "(answers no call of its step)" : "(call on an earlier page)"}</div>`}
    </div>
    <div class=${`tool-result${result?.isError ? " is-error" : ""}`} data-testid="tool-result">
      <div class="who">result${result?.isError ? " · error" : ""}</div>
      ${result ? html`<${Folded} text=${pretty(result.text)} /><${CutText} item=${result} member="text" ctx=${ctx} />` : html`<div class="muted">no result yet</div>`}
    </div>
  </div>`;
}

function rowTurn(row: Row): number | undefined {
  return row.kind === "item" ? row.item.turn : (row.call?.turn ?? row.result?.turn);
}

/**
 * One drawn row, with the attributes deep links, keyboard navigation and tests find it by;
 * `lit` when a deep link points into it.
 */
export function RowView({ row, ctx, lit = false }: { row: Row; ctx: RowContext; lit?: boolean }) {
  const [seq, last] = rowRange(row);
  const kind = row.kind === "item" ? row.item.kind : "tool";
  const inherited = seq < ctx.seedLength && kind !== "seed-boundary";
  const classes = ["row", `k-${kind}`, inherited ? "inherited" : "", lit ? "highlight" : ""];
  const turn = rowTurn(row);
  return html`<div
    class=${classes.filter(Boolean).join(" ")}
    data-testid=${kind === "turn" ? "turn" : "item"}
    data-kind=${kind}
    data-seq=${seq}
    data-last=${last}
    data-turn=${turn}
  >
    ${row.kind === "item" ? html`<${ItemBody} item=${row.item} ctx=${ctx} />` : html`<${ToolRow} row=${row} ctx=${ctx} />`}
  </div>`;
}
