// Claude Code transcripts as seedline sessions: the uuid/parentUuid tree of a file cut into its main line, a fork per abandoned branch, and a child per sidechain or subagent.
import { SeedlineError } from "../errors.js";
import type { SessionHeader } from "../generated.js";
import { validateAbsolutePath } from "../generated.js";
import {
  CLAUDE_CODE,
  ClaudeSessionMapper,
  describe,
  type LineOutcome,
} from "./claude-code-session.js";
import {
  importedSessionId,
  type LineProblem,
  type MappedSession,
  type MappedTranscript,
} from "./transcript.js";
import { readTranscriptLines, type TranscriptLine } from "./transcript-lines.js";

/** What names a Claude Code transcript besides its text. */
export interface ClaudeCodeOptions {
  /**
   * The file's path: its name, when it is `<sessionId>.jsonl`, names the session when no line
   * does (a file holding only `summary` lines).
   */
  readonly path?: string;
}

/**
 * Maps a Claude Code transcript (`~/.claude/projects/<folder>/<sessionId>.jsonl`, or a subagent's
 * `agent-<id>.jsonl`) to seedline sessions; see docs/import.md for the mapping table and the rules.
 * Pure: a function of the text's complete lines, and mapping a longer version of the file gives
 * each session's earlier events as a prefix of its new ones.
 * @throws SeedlineError INVALID_PARAMS when no line names the session (`sessionId`) and the
 *   file's name is no session id.
 */
export function mapClaudeCodeTranscript(
  text: string,
  options: ClaudeCodeOptions = {},
): MappedTranscript {
  const read = readTranscriptLines(text);
  const tree = new ClaudeCodeTree(options.path);
  for (const line of read.lines) tree.add(line);
  return tree.finish(read.refused, read.consumed);
}

type Json = Record<string, unknown>;

/** A chain of the tree mapped as one session: the main line, a fork, a sidechain. */
interface Branch {
  readonly id: string;
  readonly family: Family;
  readonly mapper: ClaudeSessionMapper;
  /** Its lines in order, the inherited ones first. */
  readonly lines: TranscriptLine[];
  /** The number of events after each of its lines. */
  readonly eventsAfter: number[];
  readonly parentSession: string | undefined;
  readonly seedLength: number;
  /** The working directory of its first line that names one. */
  cwd?: string;
  title?: string;
}

/** The branches of one conversation: the file's main one, or one sidechain (subagent). */
interface Family {
  /** "" for the main conversation, else its part of the session ids (`agent-a881341`, `sidechain-2`). */
  readonly part: string;
  readonly branches: Branch[];
  /** The branch its last line went to. */
  tip: Branch | undefined;
}

/** Where a line with a uuid went. */
interface Node {
  readonly branch: Branch;
  readonly index: number;
  /** Whether a line continuing the conversation from it was read (a later one is a branch). */
  claimed: boolean;
}

/**
 * Reads a file's lines in order and sends each to its branch. The rules (docs/import.md, "Main
 * line and branches"): a line goes to the branch of its parent (`parentUuid`, or a compaction's
 * `logicalParentUuid`); the first line continuing from a parent goes on in the parent's branch,
 * and a later one starts a fork of it there — so the first branch in file order is the main line,
 * and nothing read decides differently later. Tool results and progress lines hang on their
 * parent without continuing from it (parallel tool calls give a parent several of them). A line
 * without a parent in the file starts a sidechain family when it is one (`isSidechain`, by its
 * `agentId`), else goes on in the main family's last branch (a compaction boundary, a resumed
 * session). Lines without a uuid (snapshots, queue operations, summaries) go to the main family's
 * last branch, or the last branch read.
 */
class ClaudeCodeTree {
  readonly #path: string | undefined;
  readonly #families = new Map<string, Family>();
  readonly #nodes = new Map<string, Node>();
  readonly #outcomes: LineProblem[] = [];
  /** Lines without a uuid read before any branch existed. */
  #held: TranscriptLine[] = [];
  #sessionId: string | undefined;
  #sidechains = 0;
  #lastMain: Branch | undefined;
  #last: Branch | undefined;
  #mapped = 0;
  /** Summaries, resolved against the whole file at the end (one may come before its leaf). */
  readonly #summaries: { line: number; text: string; leaf: string }[] = [];
  /** The first time a line of the file names, for sessions that begin before any. */
  #firstTime: number | undefined;

  constructor(path: string | undefined) {
    this.#path = path;
  }

  add(line: TranscriptLine): void {
    const record = line.record;
    if (
      this.#sessionId === undefined &&
      typeof record.sessionId === "string" &&
      record.sessionId !== ""
    ) {
      this.#sessionId = record.sessionId;
    }
    if (typeof record.uuid !== "string") {
      this.#addLoose(line);
      return;
    }
    const parent = this.#parentOf(record);
    const attached = hangsOn(record);
    let branch: Branch;
    if (parent === undefined) {
      branch = this.#rootBranch(record, line);
    } else if (attached || !parent.claimed) {
      if (!attached) parent.claimed = true;
      branch = parent.branch;
    } else {
      branch = this.#fork(parent, line);
    }
    this.#nodes.set(record.uuid, { branch, index: branch.lines.length, claimed: false });
    this.#take(branch, line);
    const family = branch.family;
    family.tip = branch;
    this.#last = branch;
    if (family.part === "") this.#lastMain = branch;
  }

  finish(refused: readonly LineProblem[], consumed: number): MappedTranscript {
    if (this.#held.length > 0) {
      const main = this.#family("");
      const branch =
        main.branches[0] ?? this.#newBranch(main, undefined, 0, this.#held[0] as TranscriptLine);
      this.#flushHeld(branch);
    }
    for (const summary of this.#summaries) {
      const branch = this.#nodes.get(summary.leaf)?.branch;
      if (branch !== undefined) {
        branch.title = summary.text;
        this.#mapped++;
      } else {
        this.#outcomes.push({
          line: summary.line,
          outcome: "verbatim",
          message: `a summary of a conversation not in this file (leafUuid ${summary.leaf})`,
        });
      }
    }
    const sessions: MappedSession[] = [];
    const families = [...this.#families.values()].sort((a, b) =>
      a.part === "" ? -1 : b.part === "" ? 1 : 0,
    );
    for (const family of families) {
      for (const branch of family.branches) sessions.push(this.#session(branch));
    }
    const problems = [...refused, ...this.#outcomes].sort((a, b) => a.line - b.line);
    const verbatim = this.#outcomes.length;
    return {
      format: "claude-code",
      sessions,
      counts: { mapped: this.#mapped, verbatim, refused: refused.length },
      problems,
      consumed,
    };
  }

  /** A line without a uuid: a summary names a title; every one is kept in the current branch. */
  #addLoose(line: TranscriptLine): void {
    const record = line.record;
    const summary =
      record.type === "summary" &&
      typeof record.summary === "string" &&
      typeof record.leafUuid === "string";
    if (summary)
      this.#summaries.push({
        line: line.line,
        text: record.summary as string,
        leaf: record.leafUuid as string,
      });
    const named =
      typeof record.messageId === "string" ? this.#nodes.get(record.messageId)?.branch : undefined;
    const branch = named ?? this.#lastMain ?? this.#last;
    if (branch === undefined) {
      this.#held.push(line);
      return;
    }
    this.#take(branch, line, summary);
  }

  /** The node a line continues from: its parent, or the one a compaction boundary names. */
  #parentOf(record: Json): Node | undefined {
    const parent =
      typeof record.parentUuid === "string" ? this.#nodes.get(record.parentUuid) : undefined;
    if (parent !== undefined) return parent;
    return typeof record.logicalParentUuid === "string"
      ? this.#nodes.get(record.logicalParentUuid)
      : undefined;
  }

  /** The branch of a line with no parent in the file. */
  #rootBranch(record: Json, line: TranscriptLine): Branch {
    let part = "";
    if (record.isSidechain === true) {
      part =
        typeof record.agentId === "string" && record.agentId !== ""
          ? `agent-${record.agentId}`
          : `sidechain-${++this.#sidechains}`;
    }
    const family = this.#family(part);
    if (family.tip !== undefined) return family.tip;
    const parentSession =
      part === "" ? undefined : importedSessionId("claude-code", this.#requireId(line));
    return this.#newBranch(family, parentSession, 0, line);
  }

  /** A fork of the parent's branch, inheriting its lines through the parent. */
  #fork(parent: Node, line: TranscriptLine): Branch {
    const source = parent.branch;
    const seedLength = source.eventsAfter[parent.index] as number;
    const branch = this.#newBranch(source.family, source.id, seedLength, line);
    if (source.cwd !== undefined) branch.cwd = source.cwd;
    for (const inherited of source.lines.slice(0, parent.index + 1)) {
      branch.mapper.map(inherited);
      branch.lines.push(inherited);
      branch.eventsAfter.push(branch.mapper.events.length);
    }
    if (branch.mapper.events.length !== seedLength) {
      throw new Error(
        `expected a fork to inherit ${seedLength} events, got ${branch.mapper.events.length} (a mapping that is not a function of its lines)`,
      );
    }
    return branch;
  }

  #family(part: string): Family {
    let family = this.#families.get(part);
    if (family === undefined) {
      family = { part, branches: [], tip: undefined };
      this.#families.set(part, family);
    }
    return family;
  }

  #newBranch(
    family: Family,
    parentSession: string | undefined,
    seedLength: number,
    line: TranscriptLine,
  ): Branch {
    const sourceId = this.#requireId(line);
    const n = family.branches.length + 1;
    const part = [family.part, n === 1 ? "" : `branch-${n}`].filter((p) => p !== "").join(".");
    const branch: Branch = {
      id: importedSessionId("claude-code", sourceId, part === "" ? undefined : part),
      family,
      mapper: new ClaudeSessionMapper(this.#firstTime ?? 0),
      lines: [],
      eventsAfter: [],
      parentSession,
      seedLength,
    };
    family.branches.push(branch);
    if (this.#held.length > 0) this.#flushHeld(branch);
    return branch;
  }

  #flushHeld(branch: Branch): void {
    const held = this.#held;
    this.#held = [];
    for (const line of held)
      this.#take(
        branch,
        line,
        this.#summaries.some((s) => s.line === line.line),
      );
  }

  /** Maps a line in its own branch and counts what became of it (a summary is counted at the end). */
  #take(branch: Branch, line: TranscriptLine, summary = false): void {
    const record = line.record;
    if (this.#firstTime === undefined && typeof record.timestamp === "string") {
      const ms = Date.parse(record.timestamp);
      if (Number.isSafeInteger(ms) && ms >= 0) this.#firstTime = ms;
    }
    if (
      branch.cwd === undefined &&
      typeof record.cwd === "string" &&
      validateAbsolutePath(record.cwd)
    ) {
      branch.cwd = record.cwd;
    }
    const outcome: LineOutcome = branch.mapper.map(line);
    branch.lines.push(line);
    branch.eventsAfter.push(branch.mapper.events.length);
    if (summary) return;
    if (!outcome.verbatim) {
      this.#mapped++;
      return;
    }
    this.#outcomes.push({
      line: line.line,
      outcome: "verbatim",
      message: outcome.message,
      ...(outcome.unknown === true ? { unknown: true } : {}),
    });
  }

  #session(branch: Branch): MappedSession {
    // The time of its first own line that has one (a leading summary line has none).
    const own = branch.mapper.events.slice(branch.seedLength).find((e) => e.time > 0);
    const header: SessionHeader = {
      version: 0,
      id: branch.id,
      createdAt: own?.time ?? this.#firstTime ?? 0,
      ...(branch.cwd === undefined ? {} : { cwd: branch.cwd }),
      ...(branch.parentSession === undefined ? {} : { parentSession: branch.parentSession }),
      ...(branch.seedLength > 0 ? { seedLength: branch.seedLength } : {}),
    };
    return {
      header,
      events: branch.mapper.events,
      ...(branch.title === undefined ? {} : { title: branch.title }),
    };
  }

  /**
   * The source's session id: the first a line names, else the file's name when it is a session id
   * (Claude Code names a transcript `<sessionId>.jsonl`; a file of summaries names none inside).
   */
  #requireId(line: TranscriptLine): string {
    if (this.#sessionId !== undefined) return this.#sessionId;
    const stem = this.#path === undefined ? undefined : fileStem(this.#path);
    if (stem !== undefined && UUID.test(stem)) {
      this.#sessionId = stem;
      return stem;
    }
    const message = `expected a line naming the session (sessionId) or a file named <sessionId>.jsonl, found neither up to line ${line.line} (a ${describe(line.record)} line)`;
    throw new SeedlineError("INVALID_PARAMS", message, {
      errors: [{ instancePath: "/log", message }],
    });
  }
}

/** Whether a line hangs on its parent without continuing the conversation from it. */
function hangsOn(record: Json): boolean {
  if (record.type === "progress") return true;
  if (record.type !== "user") return false;
  const content = (record.message as { content?: unknown } | undefined)?.content;
  return (
    Array.isArray(content) &&
    content.some((b) => (b as { type?: unknown } | null)?.type === "tool_result")
  );
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A file name without its folder and `.jsonl`. */
function fileStem(path: string): string {
  const name = path.slice(Math.max(path.lastIndexOf("/"), path.lastIndexOf("\\")) + 1);
  return name.endsWith(".jsonl") ? name.slice(0, -".jsonl".length) : name;
}

export { CLAUDE_CODE };
