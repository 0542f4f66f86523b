// `export --format md`: one session as readable Markdown, rendered page by page from the store.
import type {
  AssistantMessageEvent,
  ContentBlock,
  ForeignRecordEvent,
  MessageSource,
  SessionEvent,
  SessionHeader,
  ToolCallEvent,
  ToolResultEvent,
  TurnEndReason,
  TurnTrigger,
} from "../generated.js";
import { PendingCalls } from "../log/pending-calls.js";
import type { SessionStore } from "../store/session-store.js";
import { recordKind } from "../view/timeline.js";
import { fenced, inlineCode, prose } from "./markdown-text.js";
import { isoTime } from "./output.js";

/** The title of a session's Markdown: the session's title (explicit or derived), else its id. */
export function markdownTitle(header: SessionHeader, title: string | undefined): string {
  return title ?? header.id;
}

/**
 * The session's Markdown, a piece per page of its log as read from the store (never the whole
 * log at once): the title and header facts, then each turn as a section.
 * @throws StorageError SESSION_NOT_FOUND, CORRUPT_LOG, … as `store.pages` does.
 */
export async function* sessionMarkdown(
  store: SessionStore,
  id: string,
): AsyncGenerator<string, void, undefined> {
  let renderer: MarkdownRenderer | undefined;
  const title = await store.title(id);
  for await (const page of store.pages(id)) {
    if (renderer === undefined) {
      renderer = new MarkdownRenderer(page.header, title);
      yield renderer.start();
    }
    const text = renderer.events(page.events);
    if (text !== "") yield text;
  }
  if (renderer !== undefined) yield renderer.end();
}

/** Streamed text of a step not (yet) given as an assistant/message. */
interface Streamed {
  text: string;
  reasoning: string;
}

/**
 * Renders a log's events in order, batch by batch. It keeps only what later events need: where
 * the seed ends, the open turn, the open step's pending tool calls, and the streamed text of the
 * open step.
 */
export class MarkdownRenderer {
  readonly #header: SessionHeader;
  readonly #seedLength: number;
  /** The open step's unanswered tool calls: a result is shown with the call it answers. */
  readonly #calls = new PendingCalls();
  #streamed = new Map<string, Streamed>();
  #openTurn: number | undefined;
  #count = 0;

  readonly #title: string | undefined;

  constructor(header: SessionHeader, title: string | undefined) {
    this.#header = header;
    this.#title = title;
    this.#seedLength = header.seedLength ?? 0;
  }

  /** The title and the header facts. */
  start(): string {
    const h = this.#header;
    const facts = [
      `- **Session:** ${inlineCode(h.id)}`,
      ...(h.cwd === undefined ? [] : [`- **Working directory:** ${inlineCode(h.cwd)}`]),
      `- **Created:** ${isoTime(h.createdAt)}`,
      ...(h.parentSession === undefined
        ? []
        : [
            `- **Forked from:** ${inlineCode(h.parentSession)}${
              this.#seedLength > 0
                ? ` (seedLength ${this.#seedLength}: seqs 0–${this.#seedLength - 1} inherited)`
                : ""
            }`,
          ]),
    ];
    // A heading is one line: a title's line breaks become spaces.
    return `# ${prose(markdownTitle(h, this.#title).replace(/\s+/g, " "))}\n\n${facts.join("\n")}\n`;
  }

  /** The Markdown of the next events of the log. */
  events(events: readonly SessionEvent[]): string {
    const parts: string[] = [];
    for (const e of events) {
      if (e.seq === this.#seedLength && this.#seedLength > 0) parts.push(this.#seedBoundary());
      const part = this.#event(e);
      if (part !== undefined) parts.push(part);
      this.#count = e.seq + 1;
    }
    return parts.map((p) => `\n${p}\n`).join("");
  }

  /** What closes the document: streamed text never given as a message, a turn left open, the seed boundary of a fork of the whole log. */
  end(): string {
    const parts = [...this.#flushStreamed()];
    if (this.#openTurn !== undefined) {
      parts.push(`*Turn ${this.#openTurn} is still open at the end of the log.*`);
    }
    if (this.#seedLength > 0 && this.#seedLength >= this.#count) parts.push(this.#seedBoundary());
    return parts.map((p) => `\n${p}\n`).join("");
  }

  #seedBoundary(): string {
    return `---\n\n**— inherited from parent up to seq ${this.#seedLength - 1} —**\n\n---`;
  }

  #event(e: SessionEvent): string | undefined {
    const answered = this.#calls.follow(e);
    switch (e.type) {
      case "turn/start":
        this.#openTurn = e.data.turn;
        return `## Turn ${e.data.turn}\n\n*${triggerText(e.data.trigger)} · seq ${e.seq}*`;
      case "turn/end": {
        this.#openTurn = undefined;
        const flushed = this.#flushStreamed();
        return [...flushed, turnEndText(e.data.turn, e.data.reason, e.seq)].join("\n\n");
      }
      case "step/start":
      case "compact/start":
        return undefined;
      case "step/end":
        return this.#flushStreamed().join("\n\n") || undefined;
      case "assistant/chunk": {
        const { chunk, turn, step } = e.data;
        if (chunk.type !== "text-delta" && chunk.type !== "reasoning-delta") return undefined;
        const key = `${turn}/${step}`;
        const streamed = this.#streamed.get(key) ?? { text: "", reasoning: "" };
        if (chunk.type === "text-delta") streamed.text += chunk.text;
        else streamed.reasoning += chunk.text;
        this.#streamed.set(key, streamed);
        return undefined;
      }
      case "user/message":
        return `### User${sourceSuffix(e.data.source)} · seq ${e.seq}\n\n${contentText(e.data.content)}`;
      case "context/message":
        return `### Context${sourceSuffix(e.data.source)} · seq ${e.seq}\n\n${contentText(e.data.content)}`;
      case "steering/message":
        return `### Steering${sourceSuffix(e.data.source)} · seq ${e.seq}\n\n${contentText(e.data.content)}`;
      case "prompt/blocked":
        return `### ⚠ Prompt blocked · seq ${e.seq}\n\n**Error:** ${prose(e.data.reason)}\n\n${contentText(e.data.content)}`;
      case "assistant/message":
        this.#streamed.delete(`${e.data.turn}/${e.data.step}`);
        return assistantText(e);
      case "tool/call":
        return `#### Tool call ${inlineCode(e.data.name)} · ${inlineCode(e.data.callId)} · seq ${e.seq}\n\n${fenced(prettyJson(e.data.arguments), "json")}`;
      case "tool/result":
        return toolResultText(e, answered);
      case "todo/write":
        return `*Todos · seq ${e.seq}*\n\n${e.data.todos
          .map(
            (t) =>
              `- [${t.status === "completed" ? "x" : " "}] ${prose(t.content)}${t.status === "in_progress" ? " *(in progress)*" : ""}`,
          )
          .join("\n")}`;
      case "compact/summary":
        return `*Compaction summary of seqs ${e.data.shadowedRange.start}–${e.data.shadowedRange.end} · seq ${e.seq}*\n\n${prose(e.data.summary)}`;
      case "compact/end":
        return e.data.error === undefined
          ? undefined
          : `**Error:** compaction failed: ${prose(e.data.error)} · seq ${e.seq}`;
      case "hook/invoked":
        return `*Hook ${prose(e.data.point)} ${inlineCode(e.data.handlerId)} invoked · seq ${e.seq}*`;
      case "hook/result":
        return `*Hook ${prose(e.data.point)} ${inlineCode(e.data.handlerId)}: ${prose(e.data.decision)} · seq ${e.seq}*`;
      case "foreign/record":
        return foreignText(e);
    }
  }

  /** The streamed text of steps that ended without an assistant/message, and forgets it. */
  #flushStreamed(): string[] {
    const parts: string[] = [];
    for (const [key, streamed] of this.#streamed) {
      const [turn, step] = key.split("/");
      const body = [
        ...(streamed.reasoning === "" ? [] : [reasoningBlock(streamed.reasoning)]),
        ...(streamed.text === "" ? [] : [prose(streamed.text)]),
      ];
      if (body.length === 0) continue;
      parts.push(
        `### Assistant · turn ${turn} step ${step} (streamed, no final message)\n\n${body.join("\n\n")}`,
      );
    }
    this.#streamed = new Map();
    return parts;
  }
}

function assistantText(e: AssistantMessageEvent): string {
  const body: string[] = [];
  for (const block of e.data.content) {
    if (block.type === "reasoning") body.push(reasoningBlock(block.text));
    else if (block.type === "text") body.push(prose(block.text));
    // Tool calls are rendered from their tool/call events, with their results.
  }
  const usage = e.data.usage;
  const tokens =
    usage === undefined ? "" : ` · ${usage.inputTokens} in / ${usage.outputTokens} out tokens`;
  return `### Assistant · step ${e.data.step} · seq ${e.seq}${tokens}${
    body.length === 0 ? "" : `\n\n${body.join("\n\n")}`
  }`;
}

/** Reasoning folded away: escaped prose cannot hold a `<` to close the block early. */
function reasoningBlock(text: string): string {
  return `<details><summary>Reasoning</summary>\n\n${prose(text)}\n\n</details>`;
}

/** Message content as prose: text blocks, and the text of nested results. */
function contentText(content: readonly ContentBlock[]): string {
  return prose(plainText(content)) || "*(no text)*";
}

/** The text of content blocks, joined by blank lines (for fences and prose alike). */
function plainText(content: readonly ContentBlock[]): string {
  const parts: string[] = [];
  for (const block of content) {
    if (block.type === "text" || block.type === "reasoning") parts.push(block.text);
    else if (block.type === "tool-result") parts.push(plainText(block.content));
    else parts.push(`${block.name}(${block.arguments})`);
  }
  return parts.join("\n\n");
}

/** A tool call's arguments, indented when they are JSON, as they came otherwise. */
function prettyJson(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

function sourceSuffix(source: MessageSource): string {
  return source.kind === "user" ? "" : ` (from plugin ${inlineCode(source.plugin)})`;
}

function triggerText(trigger: TurnTrigger): string {
  const from =
    trigger.source.kind === "user" ? "the user" : `plugin ${inlineCode(trigger.source.plugin)}`;
  return `Started by ${trigger.kind === "message" ? "a message" : "an injection"} from ${from}`;
}

function turnEndText(turn: number, reason: TurnEndReason, seq: number): string {
  switch (reason.kind) {
    case "completed":
      return `*Turn ${turn} completed · seq ${seq}*`;
    case "error":
      return `⚠ **Error:** turn ${turn} ended with an error in step ${reason.step}: ${prose(reason.message)}${
        reason.code === undefined ? "" : ` (${inlineCode(reason.code)})`
      } · seq ${seq}`;
    case "aborted":
    case "rejected":
      return `⚠ **Turn ${turn} ${reason.kind}**${reason.reason === undefined ? "" : `: ${prose(reason.reason)}`} · seq ${seq}`;
    default:
      return `⚠ **Turn ${turn} ended: ${reason.kind}** · seq ${seq}`;
  }
}

/** A foreign record: where it came from and what it is, then its JSON on one line. */
function foreignText(e: ForeignRecordEvent): string {
  const what = recordKind(e.data.record);
  const kind = what === "" ? "" : ` · ${inlineCode(what)}`;
  return `*Foreign record · ${prose(e.data.source)} line ${e.data.line}${kind} · seq ${e.seq}*\n\n${fenced(JSON.stringify(e.data.record), "json")}`;
}

/** A tool result under a heading naming the call it answers (its tool and seq), when it answers one. */
function toolResultText(e: ToolResultEvent, call: ToolCallEvent | undefined): string {
  const error = e.data.isError
    ? ` · ⚠ **error**${e.data.error === undefined ? "" : ` ${inlineCode(e.data.error.code)}`}`
    : "";
  const name = call === undefined ? "" : ` ${inlineCode(call.data.name)}`;
  const answers = call === undefined ? "" : ` · answers seq ${call.seq}`;
  const heading = `#### Tool result${name} · ${inlineCode(e.data.callId)}${answers}${error} · seq ${e.seq}`;
  return `${heading}\n\n${fenced(plainText(e.data.content), "text")}`;
}
