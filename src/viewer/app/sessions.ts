// The sessions list (newest activity first, filters by cwd and id prefix) and the search results.
import { useEffect, useRef, useState } from "preact/hooks";
import type { SessionSearchResult, ViewSession } from "./api-types.js";
import { plural, shortTime } from "./format.js";
import { html } from "./html.js";
import { href, navigate, routePath } from "./router.js";
import { type DataSource, errorText } from "./source.js";

type ListRoute = { name: "list"; q: string; cwd: string; prefix: string };

function SessionRow({ session }: { session: ViewSession }) {
  const { sessionId: id, header } = session;
  const path = `/s/${encodeURIComponent(id)}`;
  return html`<li class="session-row" data-testid="session-row" data-id=${id}>
    <a class="title" href=${href(path)} data-route=${path}>${session.title || "(no title)"}</a>
    ${
      header.parentSession !== undefined &&
      (header.seedLength !== undefined
        ? html`<span class="badge fork" data-testid="fork-mark" title=${`forked from ${header.parentSession}`}>fork</span>`
        : html`<span class="badge" data-testid="child-mark" title=${`spawned by ${header.parentSession}`}>child</span>`)
    }
    <div class="sub muted">
      <span class="id">${id}</span>
      ${session.cwd !== undefined && html`<span class="cwd">${session.cwd}</span>`}
      <span>${plural(session.eventCount, "event")}</span>
      <span title="last activity">${shortTime(session.updatedAt ?? header.createdAt)}</span>
    </div>
  </li>`;
}

/** The excerpt's text with its matches in <mark>, all as text nodes. */
function Excerpt({
  text,
  spans,
}: {
  text: string;
  spans: readonly { start: number; end: number }[];
}) {
  const parts: unknown[] = [];
  let at = 0;
  for (const span of spans) {
    if (span.start > at) parts.push(text.slice(at, span.start));
    parts.push(html`<mark>${text.slice(span.start, span.end)}</mark>`);
    at = span.end;
  }
  parts.push(text.slice(at));
  return html`<span>${parts}</span>`;
}

function SearchResults({ result, onMore }: { result: SessionSearchResult; onMore: () => void }) {
  if (result.results.length === 0)
    return html`<p class="muted" data-testid="no-results">no session holds every term</p>`;
  return html`<ul class="sessions" data-testid="search-results">
    ${result.results.map((entry) => {
      const path = `/s/${encodeURIComponent(entry.sessionId)}`;
      return html`<li class="session-row" data-testid="search-result" data-id=${entry.sessionId}>
        <a class="title" href=${href(path)} data-route=${path}>${entry.title || "(no title)"}</a>
        <div class="sub muted"><span class="id">${entry.sessionId}</span></div>
        <ul class="excerpts">
          ${entry.excerpts.map((excerpt) => {
            const at = `${path}/e/${excerpt.seq}`;
            return html`<li><a href=${href(at)} data-route=${at} class="muted">#${excerpt.seq}</a> <${Excerpt} text=${excerpt.text} spans=${excerpt.highlight} /></li>`;
          })}
        </ul>
      </li>`;
    })}
  </ul>
  ${result.nextCursor !== undefined && html`<button type="button" data-testid="more-results" onClick=${onMore}>more results</button>`}`;
}

/** Re-navigates to the list with one filter changed (the URL holds the filters). */
function setFilter(route: ListRoute, change: Partial<ListRoute>): void {
  navigate(routePath({ ...route, ...change }), true);
}

export function Sessions({ source, route }: { source: DataSource; route: ListRoute }) {
  const [sessions, setSessions] = useState<readonly ViewSession[]>([]);
  const [cursor, setCursor] = useState<string | undefined>();
  const [search, setSearch] = useState<SessionSearchResult | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [loading, setLoading] = useState(true);
  const generation = useRef(0);

  useEffect(() => {
    const mine = ++generation.current;
    setLoading(true);
    setError(undefined);
    const timer = setTimeout(() => {
      const done = () => mine === generation.current && setLoading(false);
      const fail = (e: unknown) => {
        if (mine === generation.current) setError(errorText(e));
        done();
      };
      if (route.q.trim() !== "") {
        source.search(route.q, route.cwd || undefined).then((r) => {
          if (mine === generation.current) setSearch(r);
          done();
        }, fail);
        return;
      }
      setSearch(undefined);
      const filter = {
        ...(route.cwd ? { cwd: route.cwd } : {}),
        ...(route.prefix ? { prefix: route.prefix } : {}),
      };
      source.sessions(filter).then((page) => {
        if (mine !== generation.current) return;
        setSessions(page.sessions);
        setCursor(page.nextCursor);
        done();
      }, fail);
    }, 120);
    return () => clearTimeout(timer);
  }, [source, route.q, route.cwd, route.prefix]);

  const more = () => {
    if (cursor === undefined) return;
    const filter = {
      cursor,
      ...(route.cwd ? { cwd: route.cwd } : {}),
      ...(route.prefix ? { prefix: route.prefix } : {}),
    };
    source.sessions(filter).then(
      (page) => {
        setSessions((old) => [...old, ...page.sessions]);
        setCursor(page.nextCursor);
      },
      (e: unknown) => setError(errorText(e)),
    );
  };

  const moreResults = () => {
    const cursorNow = search?.nextCursor;
    if (cursorNow === undefined) return;
    source.search(route.q, route.cwd || undefined, cursorNow).then(
      (next) =>
        setSearch((old) => ({
          results: [...(old?.results ?? []), ...next.results],
          ...(next.nextCursor === undefined ? {} : { nextCursor: next.nextCursor }),
        })),
      (e: unknown) => setError(errorText(e)),
    );
  };

  return html`<main class="page" data-testid="sessions-view">
    <div class="filters">
      <label>cwd <input data-testid="filter-cwd" value=${route.cwd} placeholder="/path/to/project"
        onInput=${(e: Event) => setFilter(route, { cwd: (e.target as HTMLInputElement).value })} /></label>
      <label>id prefix <input data-testid="filter-prefix" value=${route.prefix} placeholder="abc"
        onInput=${(e: Event) => setFilter(route, { prefix: (e.target as HTMLInputElement).value })} /></label>
      ${loading && html`<span class="muted">loading…</span>`}
    </div>
    ${error !== undefined && html`<div class="error" data-testid="error">${error}</div>`}
    ${
      search !== undefined
        ? html`<${SearchResults} result=${search} onMore=${moreResults} />`
        : html`<ul class="sessions" data-testid="sessions">
            ${sessions.map((s) => html`<${SessionRow} key=${s.sessionId} session=${s} />`)}
          </ul>
          ${!loading && sessions.length === 0 && html`<p class="muted">no sessions</p>`}
          ${cursor !== undefined && html`<button type="button" data-testid="more-sessions" onClick=${more}>more sessions</button>`}`
    }
  </main>`;
}
