// `seedline show ID [--follow]`: a stored session as a readable timeline, the seed boundary marked; followed, what lands next.
import type { SessionHeader } from "../../generated.js";
import type { Session, SessionStore } from "../../store/session-store.js";
import { type CommandSpec, EXIT_OK } from "../command.js";
import { followSession, interruption } from "../follow.js";
import type { Output } from "../output.js";
import { resolveSessionArg } from "../session-arg.js";
import { noStore, STORE_OPTION, storeExists, storeUrl, withStore } from "../store.js";
import { buildTimeline, type Timeline, TimelineBuilder } from "../timeline.js";
import { TimelineRenderer } from "../timeline-render.js";

export const showCommand: CommandSpec = {
  name: "show",
  summary: "show a stored session as a timeline (turns, steps, tool calls, seed boundary)",
  synopsis: "ID [--store URL] [--json] [--follow]",
  description: `
ID is a session id or a unique prefix of one (at least 4 characters); the header line shows the
session's title. Shows a session as a timeline, one line per event that matters, numbered by seq: turns and how
they ended, steps with their chunk counts, user and assistant text (excerpts), tool calls with
their names and arguments, tool results, injected context, hooks and todos. In a fork child the
inherited events are dimmed and a line marks where they end:
  ── seed boundary (38 inherited events) ──
The session is shown as stored, read without taking its writer lock and without changing it. A
log that ends inside a turn ends with a line saying so: the turn is in progress, or its writer
died and the next writer closes it.

With --follow, the timeline is followed like tail -f: each turn, step, message, tool call and
tool result is printed as it lands, whichever process writes it, and streamed assistant text
grows on a "streaming:" line of its step (reasoning on a "reasoning:" line) as its chunks land.
It goes on until SIGINT (Ctrl-C) or SIGTERM, or until the session is deleted (a line says so);
both exit 0. With --json too, the timeline object is printed on one line and then each row as it
lands on a line of its own (NDJSON; streamed text as {kind: "chunk", stream, text, …} rows), and
{"kind": "deleted", "sessionId": ID} when the session is deleted.`,
  options: {
    store: STORE_OPTION,
    json: {
      type: "boolean",
      description:
        "print {header, title?, eventCount, seedLength, openTurn?, rows: [{kind, seq, …}]}",
    },
    follow: {
      type: "boolean",
      short: "f",
      description: "keep printing what lands until interrupted or the session is deleted",
    },
  },
  positionals: { name: "ID", min: 1, max: 1 },
  async run({ args, out, env }) {
    const id = args.positionals[0] as string;
    const url = storeUrl(args.values.store, env);
    if (!storeExists(url)) throw noStore(id, url);
    const json = args.values.json === true;
    if (args.values.follow !== true) {
      const timeline = await withStore(url, async (store) => {
        const session = await store.load(await resolveSessionArg(store, id));
        return buildTimeline({
          ...(await sourceOf(store, session)),
          events: await session.readEvents({ toSeq: session.nextSeq }),
        });
      });
      if (json) out.out(`${JSON.stringify(timeline, null, 2)}\n`);
      else out.out(new TimelineRenderer(timeline, out.paint).timeline());
      return EXIT_OK;
    }
    // Listening starts before the store opens, so that an early Ctrl-C still closes it.
    const stop = interruption();
    try {
      await withStore(url, async (store) => {
        const session = await store.load(await resolveSessionArg(store, id));
        const builder = new TimelineBuilder();
        const source = {
          ...(await sourceOf(store, session)),
          events: await session.readEvents({ toSeq: session.nextSeq }),
        };
        const printer = printerFor(builder.timeline(source), out, json);
        try {
          const end = await followSession(store, session.id, {
            fromSeq: session.nextSeq,
            header: session.header,
            signal: stop.signal,
            onEvents: (events) => printer.rows(builder.follow(events)),
          });
          if (end === "deleted") printer.deleted(session.id);
        } finally {
          printer.end();
        }
      });
    } finally {
      stop.dispose();
    }
    return EXIT_OK;
  },
};

/** Where a followed timeline goes: printed at once, then row by row as they land. */
interface TimelinePrinter {
  rows(rows: Timeline["rows"]): void;
  deleted(id: string): void;
  /** Ends a line left open by streamed text. */
  end(): void;
}

/** Prints `timeline` now, and returns the printer of what lands next (for people, or NDJSON). */
function printerFor(timeline: Timeline, out: Output, json: boolean): TimelinePrinter {
  if (json) {
    out.out(`${JSON.stringify(timeline)}\n`);
    return {
      rows: (rows) => {
        for (const row of rows) out.out(`${JSON.stringify(row)}\n`);
      },
      deleted: (sessionId) => out.out(`${JSON.stringify({ kind: "deleted", sessionId })}\n`),
      end: () => {},
    };
  }
  // Room for five-digit seqs, so that rows stay aligned as the log grows.
  const renderer = new TimelineRenderer(timeline, out.paint, { minSeqWidth: 5 });
  out.out(renderer.timeline());
  return {
    rows: (rows) => {
      for (const row of rows) out.out(renderer.render(row));
    },
    deleted: (sessionId) => out.out(renderer.deleted(sessionId)),
    end: () => out.out(renderer.end()),
  };
}

/** What a timeline needs of a session besides its events. */
/** What a timeline needs of a session besides its events: header, open turn and title. */
async function sourceOf(
  store: SessionStore,
  session: Session,
): Promise<{ header: SessionHeader; openTurn: number | undefined; title?: string }> {
  const title = await store.title(session.id);
  return {
    header: session.header,
    openTurn: session.openTurn,
    ...(title === undefined ? {} : { title }),
  };
}
