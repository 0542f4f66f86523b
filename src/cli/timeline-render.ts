// A timeline as text for people: a header block and one line per row, indented by turn and step; streamed text inline as it grows.
import { cutStyledToWidth, cutToWidth, oneLine } from "../util/text-width.js";
import type { TimelineRow, TimelineSummary } from "../view/timeline.js";
import { isoTime, type Palette, plural } from "./output.js";

/** How wide a row's text may be before it is cut (display columns), by what it shows. */
const FIELD_WIDTH = { text: 96, arguments: 80 } as const;

/** How a timeline is laid out. */
export interface RenderOptions {
  /** Seqs are padded to at least this width (a followed timeline leaves room for seqs to come). */
  readonly minSeqWidth?: number;
  /** Text whole: no excerpts, its line breaks kept (continuation lines indented under the row). */
  readonly full?: boolean;
  /** Each line is cut to this many display columns (a terminal's width); absent: not cut. */
  readonly columns?: number;
}

/** The label streamed text follows, by stream. */
const STREAM_LABEL = { text: "streaming", reasoning: "reasoning" } as const;

/** The stream line being written: streamed text of one step, continued by each chunk that lands. */
interface OpenStream {
  readonly turn: number;
  readonly step: number;
  readonly stream: "text" | "reasoning";
  /** What starts a continuation line: blanks as wide as the seq, indentation and label. */
  readonly indent: string;
  /** Line breaks of the text not written yet: they are written before the text that follows them. */
  breaks: number;
}

/**
 * Renders rows one after another, keeping what a row's look depends on from the rows before it:
 * the turn and step it is in (its indentation), and the stream line streamed text is adding to.
 * One renderer renders a session's timeline and then, when it is followed, each row that lands.
 */
export class TimelineRenderer {
  readonly #timeline: TimelineSummary;
  readonly #paint: Palette;
  readonly #width: number;
  readonly #full: boolean;
  readonly #columns: number | undefined;
  #inTurn = false;
  #inStep = false;
  #stream: OpenStream | undefined;

  /**
   * Seqs are padded to the width of the timeline's last seq, or to `minSeqWidth` when wider (a
   * followed timeline leaves room for the seqs to come; longer ones are not cut).
   */
  constructor(timeline: TimelineSummary, paint: Palette, options: RenderOptions = {}) {
    this.#timeline = timeline;
    this.#paint = paint;
    this.#full = options.full === true;
    this.#columns = options.columns;
    this.#width = Math.max(
      String(Math.max(0, timeline.eventCount - 1)).length,
      options.minSeqWidth ?? 0,
    );
  }

  /** The header block: the session's id, counts, creation time and cwd, then a blank line. */
  head(): string {
    const { header, title, eventCount, seedLength } = this.#timeline;
    const paint = this.#paint;
    const facts = [
      plural(eventCount, "event"),
      `created ${isoTime(header.createdAt)}`,
      ...(header.parentSession === undefined ? [] : [`forked from ${header.parentSession}`]),
      ...(seedLength > 0 ? [`${seedLength} inherited`] : []),
    ];
    let text = `${this.#line(`${paint.bold("session")} ${paint.bold(header.id)}${title === undefined ? "" : `  ${title}`}`)}${this.#line(`  ${paint.dim(facts.join(" · "))}`)}`;
    if (header.cwd !== undefined)
      text += this.#line(`  ${paint.dim("cwd")} ${paint.cyan(header.cwd)}`);
    return `${text}\n`;
  }

  /** The line that says how many rows were left out, and how to see them. */
  skipped(count: number, hint: string): string {
    return this.#line(
      this.#paint.yellow(
        `… ${count.toLocaleString("en-US")} earlier ${count === 1 ? "row" : "rows"} not shown (${hint})`,
      ),
    );
  }

  /** The last line, when the log ends inside `openTurn`; ends a line left open by streamed text. */
  closing(openTurn: number | undefined): string {
    if (openTurn === undefined) return this.end();
    return `${this.end()}${this.#line(
      this.#paint.yellow(
        `turn ${openTurn} still open (in progress, or interrupted: the next writer closes it)`,
      ),
    )}`;
  }

  /**
   * The text that shows `row`: a whole line (ending in "\n") for most rows; for a `chunk` row, its
   * text continuing the stream line of its step (started with the chunk's seq and a label when
   * there is none), left without a final "\n" so that the next chunk continues it; "" for a step's
   * end, which only ends the step's indentation. A row that is not a chunk of the open stream
   * line ends that line first.
   */
  render(row: TimelineRow): string {
    if (row.kind === "chunk") return this.#chunk(row);
    const end = this.end();
    const paint = this.#paint;
    if (row.kind === "seed-boundary") {
      return `${end}${this.#line(paint.yellow(`── seed boundary (${plural(row.inherited, "inherited event")}) ──`))}`;
    }
    if (row.kind === "step-end") {
      this.#inStep = false;
      return end;
    }
    // Rows inside a turn are indented one level, rows inside a step two.
    let depth = this.#depth();
    if (row.kind === "turn") {
      depth = 0;
      this.#inTurn = true;
    } else if (row.kind === "turn-end") {
      depth = 0;
      this.#inTurn = false;
      this.#inStep = false;
    } else if (row.kind === "step") {
      depth = 1;
      this.#inStep = true;
    }
    const indent = "  ".repeat(depth);
    // Continuation lines of whole text (--full) start under the row's text.
    const text = rowText(row, paint, (value, width) => this.#field(value, width)).replaceAll(
      "\n",
      `\n${" ".repeat(this.#width + 2)}${indent}  `,
    );
    const body = `${indent}${text}`;
    return `${end}${this.#line(`${this.#seq(row.seq)}  ${row.seq < this.#timeline.seedLength ? paint.dim(stripped(body)) : body}`)}`;
  }

  /** "\n" when streamed text left its line open (and the line is then closed), else "". */
  end(): string {
    if (this.#stream === undefined) return "";
    this.#stream = undefined;
    return "\n";
  }

  /** The line that says the followed session was deleted. */
  deleted(id: string): string {
    return `${this.end()}${this.#paint.yellow(`session ${id} was deleted`)}\n`;
  }

  #chunk(row: Extract<TimelineRow, { kind: "chunk" }>): string {
    let text = "";
    let stream = this.#stream;
    if (
      stream === undefined ||
      stream.turn !== row.turn ||
      stream.step !== row.step ||
      stream.stream !== row.stream
    ) {
      text += this.end();
      const indent = "  ".repeat(this.#depth());
      const label = `${STREAM_LABEL[row.stream]}: `;
      const paintLabel = row.stream === "text" ? this.#paint.magenta : this.#paint.dim;
      text += `${this.#seq(row.seq)}  ${indent}${paintLabel(label)}`;
      stream = {
        turn: row.turn,
        step: row.step,
        stream: row.stream,
        indent: " ".repeat(this.#width + 2 + indent.length + label.length),
        breaks: 0,
      };
      this.#stream = stream;
    }
    const pieces = printable(row.text).split("\n");
    for (const [i, piece] of pieces.entries()) {
      if (i > 0) stream.breaks += 1;
      if (piece === "") continue;
      if (stream.breaks > 0) text += `${"\n".repeat(stream.breaks)}${stream.indent}`;
      stream.breaks = 0;
      text += row.stream === "text" ? piece : this.#paint.dim(piece);
    }
    return text;
  }

  /** Text of a row: safe to print, and unless whole (--full) on one line cut to `width` columns. */
  #field(text: string, width: number): string {
    const safe = printable(text);
    return this.#full ? safe : cutToWidth(oneLine(safe), width);
  }

  /** `text` as a line: cut to the terminal's width when there is one (never with --full). */
  #line(text: string): string {
    const cut =
      this.#columns === undefined || this.#full ? text : cutStyledToWidth(text, this.#columns);
    return `${cut}\n`;
  }

  #depth(): number {
    return (this.#inTurn ? 1 : 0) + (this.#inStep ? 1 : 0);
  }

  #seq(seq: number): string {
    return this.#paint.dim(String(seq).padStart(this.#width));
  }
}

/** Cuts a row's text: to `width` columns, or not at all (--full). */
type Field = (text: string, width: number) => string;

function rowText(
  row: Exclude<TimelineRow, { kind: "seed-boundary" | "step-end" | "chunk" }>,
  paint: Palette,
  field: Field,
): string {
  switch (row.kind) {
    case "turn":
      return paint.bold(`turn ${row.turn}`) + paint.dim(` · ${row.trigger}`);
    case "turn-end": {
      const reason = row.reason === "completed" ? paint.green(row.reason) : paint.red(row.reason);
      return `${paint.bold(`turn ${row.turn} end`)} · ${reason}${row.detail ? `: ${field(row.detail, FIELD_WIDTH.text)}` : ""}`;
    }
    case "step": {
      const step = paint.blue(`step ${row.step}`);
      return row.chunks === undefined
        ? step
        : `${step}${paint.dim(` · ${plural(row.chunks, "chunk")}`)}`;
    }
    case "message": {
      const who =
        row.role === "user"
          ? paint.green("user")
          : row.role === "assistant"
            ? paint.magenta("assistant")
            : paint.yellow(row.role + (row.source ? ` (${row.source})` : ""));
      const detail = row.detail ? paint.dim(`  [${field(row.detail, FIELD_WIDTH.text)}]`) : "";
      return `${who}: ${field(row.text, FIELD_WIDTH.text)}${detail}`;
    }
    case "tool-call":
      return `${paint.cyan(`→ ${row.name}`)} ${paint.dim(field(row.arguments, FIELD_WIDTH.arguments))}`;
    case "tool-result": {
      const label = `← ${row.name ?? row.callId}${row.isError ? " (error)" : ""}`;
      return `${row.isError ? paint.red(label) : paint.cyan(label)} ${field(row.text, FIELD_WIDTH.text)}`;
    }
    case "other":
      return `${paint.dim(row.type)} ${field(row.text, FIELD_WIDTH.text)}`;
    case "foreign": {
      const what = row.what === "" ? "" : ` ${row.what}`;
      return `${paint.dim(`${row.source}:${row.line}`)}${what} ${paint.dim(field(row.text, FIELD_WIDTH.arguments))}`;
    }
  }
}

/** Text without SGR codes, so that a dimmed row is dim throughout rather than half-coloured. */
function stripped(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching ANSI escape codes is the point.
  return text.replace(/\u001b\[[0-9;]*m/g, "");
}

/**
 * Streamed text safe to write to a terminal as it is: line ends as "\n", tabs kept, every other
 * control character (escape sequences a model wrote among them) dropped.
 */
function printable(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: dropping control characters is the point.
  return text.replace(/\r\n?/g, "\n").replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, "");
}
