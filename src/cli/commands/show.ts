// `seedline show ID`: a stored session as a readable timeline (the last rows, one turn, or all), paged on a terminal; followed, what lands next.

import type { Timeline, TimelineRow, TimelineSummary } from "../../view/timeline.js";
import { type CommandSpec, EXIT_OK, UsageError } from "../command.js";
import { followSession, interruption } from "../follow.js";
import type { Output } from "../output.js";
import { openSink, type TextSink } from "../pager.js";
import { resolveSessionArg } from "../session-arg.js";
import { noStore, STORE_OPTION, storeExists, storeUrl, withStore } from "../store.js";
import {
  type RowChoice,
  RowSelection,
  readRows,
  type StoredStart,
  storedStart,
  Tail,
} from "../timeline-read.js";
import { TimelineRenderer } from "../timeline-render.js";

/** The rows shown when neither --tail, --turn nor --all says otherwise: a screenful or a few. */
export const DEFAULT_TAIL = 200;

export const showCommand: CommandSpec = {
  name: "show",
  summary: "show a stored session as a timeline (turns, steps, tool calls, seed boundary)",
  synopsis:
    "ID [--turn N] [--tail N | --all] [--full] [--no-pager] [--store URL] [--json] [--follow]",
  description: `
Shows a session as a timeline, one line per event that matters, numbered by seq: turns and how
they ended, steps with their chunk counts, user and assistant text (excerpts), tool calls with
their names and arguments, tool results, injected context, hooks and todos. In a fork child the
inherited events are dimmed and a line marks where they end:
  ── seed boundary (38 inherited events) ──
The session is shown as stored, read page by page without taking its writer lock and without
changing it. A log that ends inside a turn ends with a line saying so: the turn is in progress,
or its writer died and the next writer closes it.

Only the last ${DEFAULT_TAIL} rows are shown unless --tail N, --turn N or --all says otherwise; a line
says how many were left out. Text is cut to an excerpt between characters (an emoji or a CJK
character is whole or absent) and, on a terminal, each line to the terminal's width ($COLUMNS
when set); --full shows text whole with its line breaks. On a terminal the timeline goes
through $PAGER (default "less -FRX"; PAGER= turns it off) unless --no-pager or --follow.

With --follow, the timeline is followed like tail -f: each turn, step, message, tool call and
tool result is printed as it lands, whichever process writes it, and streamed assistant text
grows on a "streaming:" line of its step (reasoning on a "reasoning:" line) as its chunks land.
It goes on until SIGINT (Ctrl-C) or SIGTERM, or until the session is deleted (a line says so);
both exit 0. With --json too, the timeline object is printed on one line and then each row as it
lands on a line of its own (NDJSON; streamed text as {kind: "chunk", stream, text, …} rows), and
{"kind": "deleted", "sessionId": ID} when the session is deleted.

--json prints every row (or those --turn and --tail choose) with text whole, never cut.`,
  options: {
    turn: { type: "string", arg: "N", description: "only turn N (its rows from start to end)" },
    tail: { type: "string", arg: "N", description: `the last N rows (default ${DEFAULT_TAIL})` },
    all: { type: "boolean", description: "every row" },
    full: { type: "boolean", description: "text whole, with its line breaks: nothing cut" },
    "no-pager": { type: "boolean", description: "never page (default: $PAGER on a terminal)" },
    store: STORE_OPTION,
    json: {
      type: "boolean",
      description:
        "print {header, title?, eventCount, seedLength, openTurn?, skippedRows?, rows: [{kind, seq, …}]}",
    },
    follow: {
      type: "boolean",
      short: "f",
      description: "keep printing what lands until interrupted or the session is deleted",
    },
  },
  positionals: { name: "ID", min: 1, max: 1 },
  async run({ args, out, env }) {
    const arg = args.positionals[0] as string;
    const url = storeUrl(args.values.store, env);
    const json = args.values.json === true;
    const choice = rowChoice(args.values, json);
    if (!storeExists(url)) throw noStore(arg, url);
    const view: View = { out, choice, full: args.values.full === true };
    if (args.values.follow !== true) {
      await withStore(url, async (store) => {
        const id = await resolveSessionArg(store, arg);
        const start = await storedStart(store, id);
        const sink = openSink(out, env, args.values["no-pager"] !== true);
        try {
          const read = (onRows: OnRows) => readRows(store, id, start, onRows);
          if (json) await showJson(id, read, view, sink);
          else await showText(id, start, read, view, sink);
        } finally {
          await sink.close();
        }
      });
      return EXIT_OK;
    }
    // Listening starts before the store opens, so that an early Ctrl-C still closes it.
    const stop = interruption();
    try {
      await withStore(url, async (store) => {
        const id = await resolveSessionArg(store, arg);
        const start = await storedStart(store, id);
        const selection = new RowSelection(choice);
        const kept = new Tail<TimelineRow>(choice.tail ?? Number.MAX_SAFE_INTEGER);
        const { builder, summary } = await readRows(store, id, start, async (rows) => {
          for (const row of rows) if (selection.accepts(row)) kept.push(row);
          return true;
        });
        selection.checkFound(id);
        const printer = printerFor(summary, kept, out, json, view.full);
        try {
          const end = await followSession(store, id, {
            fromSeq: start.length,
            header: start.summary.header,
            signal: stop.signal,
            onEvents: (events) =>
              printer.rows(builder.follow(events).filter((row) => selection.accepts(row))),
          });
          if (end === "deleted") printer.deleted(id);
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

type OnRows = (rows: readonly TimelineRow[]) => Promise<boolean>;
type Read = (onRows: OnRows) => ReturnType<typeof readRows>;

/** How the timeline is to be shown. */
interface View {
  readonly out: Output;
  readonly choice: RowChoice;
  readonly full: boolean;
}

/**
 * The rows asked for: --turn, --tail or --all; people get the last {@link DEFAULT_TAIL} rows
 * when nothing is said, machines (--json) every row.
 * @throws UsageError for a turn or tail that is not a number, or --tail with --all.
 */
function rowChoice(
  values: Readonly<Record<string, string | boolean | undefined>>,
  json: boolean,
): RowChoice {
  const turn = count(values.turn, "--turn", 0);
  const tail = count(values.tail, "--tail", 1);
  if (tail !== undefined && values.all === true) {
    throw new UsageError("expected one of --tail and --all, got both");
  }
  const kept = tail ?? (values.all === true || json ? undefined : DEFAULT_TAIL);
  return {
    ...(turn === undefined ? {} : { turn }),
    ...(kept === undefined ? {} : { tail: kept }),
  };
}

function count(value: string | boolean | undefined, name: string, min: number): number | undefined {
  if (typeof value !== "string") return undefined;
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(n) || n < min) {
    throw new UsageError(
      `expected ${name} to be an integer of at least ${min}, got ${JSON.stringify(value)}`,
    );
  }
  return n;
}

/**
 * The timeline for people. Every row is rendered in order (a row's indentation depends on those
 * before it), and only the lines asked for are kept; with --all and no turn the lines go out as
 * they are read, so a long session starts showing at once and memory stays flat.
 */
async function showText(
  id: string,
  start: StoredStart,
  read: Read,
  view: View,
  sink: TextSink,
): Promise<void> {
  const { out, choice } = view;
  const renderer = new TimelineRenderer(start.summary, out.paint, {
    full: view.full,
    ...(out.columns === undefined ? {} : { columns: out.columns }),
  });
  const selection = new RowSelection(choice);
  if (choice.turn === undefined && choice.tail === undefined) {
    await sink.write(renderer.head());
    const { summary } = await read(async (rows) => {
      for (const row of rows) await sink.write(renderer.render(row));
      return !sink.closed;
    });
    await sink.write(renderer.closing(summary.openTurn));
    return;
  }
  const kept = new Tail<string>(choice.tail ?? Number.MAX_SAFE_INTEGER);
  const { summary } = await read(async (rows) => {
    for (const row of rows) {
      if (!selection.accepts(row)) continue;
      const text = renderer.render(row);
      if (text !== "") kept.push(text);
    }
    return true;
  });
  selection.checkFound(id);
  let text = renderer.head();
  if (kept.dropped > 0) {
    const more =
      choice.turn === undefined
        ? "--all shows every row"
        : `--all shows all of turn ${choice.turn}`;
    text += renderer.skipped(kept.dropped, `--tail N shows more, ${more}`);
  }
  await sink.write(text);
  for (const line of kept.values()) await sink.write(line);
  const open = summary.openTurn;
  await sink.write(
    renderer.closing(choice.turn === undefined || choice.turn === open ? open : undefined),
  );
}

/** The timeline as one JSON object: the rows asked for, their text whole. */
async function showJson(id: string, read: Read, view: View, sink: TextSink): Promise<void> {
  const selection = new RowSelection(view.choice);
  const kept = new Tail<TimelineRow>(view.choice.tail ?? Number.MAX_SAFE_INTEGER);
  const { summary } = await read(async (rows) => {
    for (const row of rows) if (selection.accepts(row)) kept.push(row);
    return true;
  });
  selection.checkFound(id);
  const timeline: Timeline & { skippedRows?: number } = {
    ...summary,
    ...(kept.dropped > 0 ? { skippedRows: kept.dropped } : {}),
    rows: kept.values(),
  };
  await sink.write(`${JSON.stringify(timeline, null, 2)}\n`);
}

/** Where a followed timeline goes: printed at once, then row by row as they land. */
interface TimelinePrinter {
  rows(rows: readonly TimelineRow[]): void;
  deleted(id: string): void;
  /** Ends a line left open by streamed text. */
  end(): void;
}

/** Prints the timeline read so far now, and returns the printer of what lands next (for people, or NDJSON). */
function printerFor(
  summary: TimelineSummary,
  kept: Tail<TimelineRow>,
  out: Output,
  json: boolean,
  full: boolean,
): TimelinePrinter {
  if (json) {
    const skipped = kept.dropped > 0 ? { skippedRows: kept.dropped } : {};
    out.out(`${JSON.stringify({ ...summary, ...skipped, rows: kept.values() })}\n`);
    return {
      rows: (rows) => {
        for (const row of rows) out.out(`${JSON.stringify(row)}\n`);
      },
      deleted: (sessionId) => out.out(`${JSON.stringify({ kind: "deleted", sessionId })}\n`),
      end: () => {},
    };
  }
  // Room for five-digit seqs, so that rows stay aligned as the log grows.
  const renderer = new TimelineRenderer(summary, out.paint, {
    minSeqWidth: 5,
    full,
    ...(out.columns === undefined ? {} : { columns: out.columns }),
  });
  let text = renderer.head();
  if (kept.dropped > 0)
    text += renderer.skipped(kept.dropped, "--tail N shows more, --all every row");
  for (const row of kept.values()) text += renderer.render(row);
  out.out(text + renderer.closing(summary.openTurn));
  return {
    rows: (rows) => {
      for (const row of rows) out.out(renderer.render(row));
    },
    deleted: (sessionId) => out.out(renderer.deleted(sessionId)),
    end: () => out.out(renderer.end()),
  };
}
