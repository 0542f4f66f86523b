// One session's page: its header, tabs (timeline, lineage, compare for a fork, replay) and the tab's view.
import { useEffect, useState } from "preact/hooks";
import type { SessionDetail } from "./api-types.js";
import { Compare } from "./compare.js";
import { plural, shortTime } from "./format.js";
import { html } from "./html.js";
import { Lineage } from "./lineage.js";
import { Replay } from "./replay.js";
import { href, type SessionTab } from "./router.js";
import { type DataSource, errorText } from "./source.js";
import { Timeline } from "./timeline.js";

export interface SessionProps {
  readonly source: DataSource;
  readonly id: string;
  readonly tab: SessionTab;
  readonly seq?: number;
  readonly turn?: number;
}

function Tabs({
  id,
  tab,
  isFork,
  source,
}: {
  id: string;
  tab: SessionTab;
  isFork: boolean;
  source: DataSource;
}) {
  const base = `/s/${encodeURIComponent(id)}`;
  const tabs: [SessionTab, string][] = [
    ["timeline", base],
    ["lineage", `${base}/lineage`],
  ];
  if (isFork && !source.isStatic) tabs.push(["compare", `${base}/compare`]);
  tabs.push(["replay", `${base}/replay`]);
  return html`<nav class="tabs">
    ${tabs.map(
      ([name, path]) =>
        html`<a href=${href(path)} data-route=${path} data-testid=${`tab-${name}`} class=${name === tab ? "active" : ""}>${name}</a>`,
    )}
  </nav>`;
}

/** The seq a `/t/<turn>` link opens at, read from the turn index. */
function useTurnSeq(source: DataSource, id: string, turn: number | undefined) {
  const [seq, setSeq] = useState<number | undefined>();
  useEffect(() => {
    setSeq(undefined);
    if (turn === undefined) return;
    source.turns(id).then(
      (index) => setSeq(index.turns.find((t) => t.turn === turn)?.seq ?? 0),
      () => setSeq(0),
    );
  }, [source, id, turn]);
  return seq;
}

export function Session({ source, id, tab, seq, turn }: SessionProps) {
  const [detail, setDetail] = useState<SessionDetail | undefined>();
  const [error, setError] = useState<string | undefined>();
  const turnSeq = useTurnSeq(source, id, turn);
  useEffect(() => {
    setDetail(undefined);
    setError(undefined);
    source.session(id).then(setDetail, (e: unknown) => setError(errorText(e)));
  }, [source, id]);

  if (error !== undefined)
    return html`<main class="page"><div class="error" data-testid="error">${error}</div></main>`;
  const at = turn !== undefined ? turnSeq : seq;
  // The timeline asks for its page at once, beside the session's header (not after it): the
  // first screen waits for one round trip, not two.
  const timeline =
    tab === "timeline" &&
    (turn === undefined || turnSeq !== undefined) &&
    html`<${Timeline} key=${`${id}@${at ?? ""}`} source=${source} sessionId=${id} seedLength=${detail?.header.seedLength} at=${at} />`;
  if (detail === undefined) {
    return html`<main class="page" data-testid="session-view" data-id=${id}>
      <header class="session-head">
        <h2 class="muted">…</h2>
        <div class="sub muted"><span class="id">${id}</span></div>
        <${Tabs} id=${id} tab=${tab} isFork=${false} source=${source} />
      </header>
      ${timeline}
    </main>`;
  }
  const { session, header } = detail;
  const seedLength = header.seedLength ?? 0;
  const parent = header.parentSession;
  // A fork carries its seed length; a child spawned from a parent does not (nothing inherited).
  const isFork = parent !== undefined && header.seedLength !== undefined;
  const parentPath = parent === undefined ? "" : `/s/${encodeURIComponent(parent)}`;
  return html`<main class="page" data-testid="session-view" data-id=${id}>
    <header class="session-head">
      <h2 data-testid="session-title">${session.title || "(no title)"}</h2>
      <div class="sub muted">
        <span class="id">${id}</span>
        ${session.cwd !== undefined && html`<span>${session.cwd}</span>`}
        <span>${plural(session.eventCount, "event")}</span>
        <span>${shortTime(session.updatedAt ?? header.createdAt)}</span>
        ${
          parent !== undefined &&
          html`<span data-testid="fork-of">${isFork ? "fork of" : "spawned by"} ${source.isStatic ? parent : html`<a href=${href(parentPath)} data-route=${parentPath}>${parent}</a>`}${isFork ? `, seed ${seedLength}` : ""}</span>`
        }
      </div>
      <${Tabs} id=${id} tab=${tab} isFork=${isFork} source=${source} />
    </header>
    ${timeline}
    ${tab === "lineage" && html`<${Lineage} root=${detail.lineage} current=${id} offline=${source.isStatic} />`}
    ${tab === "compare" && html`<${Compare} source=${source} id=${id} />`}
    ${tab === "replay" && html`<${Replay} source=${source} id=${id} />`}
  </main>`;
}
