// The timeline of one session: loads one page on open, more as the reader scrolls (both ways), then follows live appends.
import { useEffect, useRef, useState } from "preact/hooks";
import type { ViewItem } from "./api-types.js";
import { html } from "./html.js";
import { type RowContext, RowView } from "./items.js";
import { type DataSource, errorText } from "./source.js";
import { joinPages, rowAt, rowsOf } from "./timeline-model.js";

/** Events per page the timeline asks for: one page draws the first screen. */
export const PAGE_EVENTS = 500;

/** Fired on window to make the open timeline load its next page (keyboard navigation past the end). */
export const LOAD_MORE_EVENT = "seedline:more";

interface State {
  readonly items: readonly ViewItem[];
  /** The seq the first loaded page starts at. */
  readonly first: number;
  /** The seq the next page starts at. */
  readonly next: number;
  readonly done: boolean;
  readonly loaded: boolean;
  readonly error?: string;
  readonly live?: "watching" | "ended";
}

const EMPTY: State = { items: [], first: 0, next: 0, done: false, loaded: false };

export interface TimelineProps {
  readonly source: DataSource;
  readonly sessionId: string;
  /** The session's seed length (from its header); until that arrives, the seed boundary's item tells it. */
  readonly seedLength: number | undefined;
  /** Open at this event: its page loads first, the row holding it is scrolled to and lit. */
  readonly at?: number;
}

/**
 * Calls `onVisible` when `ref`'s element comes near the viewport. The observer is made again
 * whenever `key` changes (a page landed): a new observer reports the element's state at once, so
 * a sentinel still in view after a short page asks for the next one.
 */
function useNearViewport(
  ref: { current: Element | null },
  onVisible: () => void,
  active: boolean,
  key: number,
) {
  const callback = useRef(onVisible);
  callback.current = onVisible;
  useEffect(() => {
    const element = ref.current;
    if (!active || element === null) return;
    const observer = new IntersectionObserver(
      (entries) => {
        if (entries.some((e) => e.isIntersecting)) callback.current();
      },
      { rootMargin: "600px 0px" },
    );
    observer.observe(element);
    return () => observer.disconnect();
  }, [active, ref, key]);
}

/**
 * The items of the events from `from` until at least `until` (or the end of the log): one page,
 * and more while the server cut a page short of `until` (it cuts before a step that began in the
 * page and did not end there). `bounded`: no page reaches past `until` (the pages before ones
 * already drawn). Every page moves on, so this ends.
 */
async function fetchSpan(
  source: DataSource,
  sessionId: string,
  span: { from: number; until: number; bounded: boolean },
): Promise<{ items: ViewItem[]; next: number; done: boolean }> {
  let items: ViewItem[] = [];
  let next = span.from;
  for (;;) {
    const limit = span.bounded ? Math.min(PAGE_EVENTS, span.until - next) : PAGE_EVENTS;
    const page = await source.timeline(sessionId, next, limit);
    items = joinPages(items, page.items);
    if (page.done) return { items, next: page.nextSeq, done: true };
    if (page.nextSeq <= next) {
      throw new Error(`expected a timeline page past seq ${next}, got nextSeq ${page.nextSeq}`);
    }
    next = page.nextSeq;
    if (next >= span.until) return { items, next, done: false };
  }
}

export function Timeline({ source, sessionId, seedLength, at }: TimelineProps) {
  const [state, setState] = useState<State>(EMPTY);
  const current = useRef(state);
  current.current = state;
  const busy = useRef(false);
  const bottom = useRef<HTMLDivElement>(null);
  const top = useRef<HTMLDivElement>(null);

  useEffect(() => {
    let cancelled = false;
    setState(EMPTY);
    busy.current = true;
    const start = at === undefined ? 0 : Math.floor(at / PAGE_EVENTS) * PAGE_EVENTS;
    // A deep link's event may lie past where its page was cut (before a step begun in it).
    fetchSpan(source, sessionId, { from: start, until: (at ?? start) + 1, bounded: false }).then(
      (span) => {
        busy.current = false;
        if (cancelled) return;
        setState({
          items: span.items,
          first: start,
          next: span.next,
          done: span.done,
          loaded: true,
        });
      },
      (error: unknown) => {
        busy.current = false;
        if (!cancelled) setState({ ...EMPTY, loaded: true, error: errorText(error) });
      },
    );
    return () => {
      cancelled = true;
    };
  }, [source, sessionId, at]);

  const loadMore = () => {
    const s = current.current;
    if (busy.current || !s.loaded || s.done || s.error !== undefined) return;
    busy.current = true;
    source.timeline(sessionId, s.next, PAGE_EVENTS).then(
      (page) => {
        busy.current = false;
        setState((old) => ({
          ...old,
          items: joinPages(old.items, page.items),
          next: page.nextSeq,
          done: page.done,
        }));
      },
      (error: unknown) => {
        busy.current = false;
        setState((old) => ({ ...old, error: errorText(error) }));
      },
    );
  };

  const loadEarlier = () => {
    const s = current.current;
    if (busy.current || !s.loaded || s.first === 0) return;
    busy.current = true;
    const from = Math.max(0, s.first - PAGE_EVENTS);
    fetchSpan(source, sessionId, { from, until: s.first, bounded: true }).then(
      (page) => {
        const height = document.documentElement.scrollHeight;
        setState((old) => ({ ...old, items: joinPages(page.items, old.items), first: from }));
        // Keep what the reader looks at in place: the page grew above it.
        requestAnimationFrame(() => {
          window.scrollBy(0, document.documentElement.scrollHeight - height);
          busy.current = false;
        });
      },
      (error: unknown) => {
        busy.current = false;
        setState((old) => ({ ...old, error: errorText(error) }));
      },
    );
  };

  useNearViewport(bottom, loadMore, state.loaded && !state.done, state.next);
  useNearViewport(top, loadEarlier, state.loaded && state.first > 0, state.first);

  useEffect(() => {
    const more = () => loadMore();
    window.addEventListener(LOAD_MORE_EVENT, more);
    return () => window.removeEventListener(LOAD_MORE_EVENT, more);
  });

  // A deep link: scroll to the lit row once its page is drawn.
  useEffect(() => {
    if (!state.loaded || at === undefined) return;
    const lit = document.querySelector(".timeline .highlight");
    lit?.scrollIntoView({ block: "center" });
  }, [state.loaded, at]);

  // Live: once the end of the log is drawn, follow what lands after it.
  useEffect(() => {
    if (!state.done || source.isStatic) return;
    const stop = source.live(sessionId, current.current.next, {
      onItems: (items, nextSeq) =>
        setState((old) => ({ ...old, items: joinPages(old.items, items), next: nextSeq })),
      onEnd: () => setState((old) => ({ ...old, live: "ended" })),
    });
    setState((old) => ({ ...old, live: "watching" }));
    return stop;
  }, [state.done, source, sessionId]);

  const boundary = state.items.find((item) => item.kind === "seed-boundary");
  const inherited = seedLength ?? (boundary?.kind === "seed-boundary" ? boundary.inherited : 0);
  const ctx: RowContext = { source, sessionId, seedLength: inherited };
  const rows = rowsOf(state.items);
  const lit = at === undefined ? -1 : rowAt(rows, at);
  return html`<div class="timeline" data-testid="timeline">
    ${state.first > 0 && html`<div ref=${top} class="sentinel muted" data-testid="load-earlier">events before ${state.first}…</div>`}
    ${rows.map((row, i) => html`<${RowView} lit=${i === lit} key=${row.kind === "item" ? `${row.item.kind}-${row.item.seq}` : `tool-${row.seq}`} row=${row} ctx=${ctx} />`)}
    ${state.error !== undefined && html`<div class="error" data-testid="error">${state.error}</div>`}
    ${!state.loaded && html`<div class="muted">loading…</div>`}
    ${state.loaded && state.items.length === 0 && state.done && html`<div class="muted">no events</div>`}
    ${state.loaded && !state.done && html`<div ref=${bottom} class="sentinel muted" data-testid="load-more">loading events from ${state.next}…</div>`}
    ${
      state.done &&
      html`<div class="status muted" data-testid="live-status" data-state=${state.live ?? "static"}>
        ${state.next} events${state.live === "watching" ? " · live: new events appear here" : ""}${state.live === "ended" ? " · the session ended" : ""}
      </div>`
    }
  </div>`;
}
