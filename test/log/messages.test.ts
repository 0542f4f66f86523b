// Derived messages: what deriveMessages and Session.deriveMessages produce from a log's surface.
import { describe, expect, it } from "vitest";
import {
  type DerivedMessage,
  deriveMessages,
  InvalidEventError,
  type SessionEvent,
  SessionStore,
} from "../../src/index.js";
import { SessionLog } from "../../src/log/session-log.js";
import {
  assistantMessage,
  contextMessage,
  simpleTurn,
  steeringMessage,
  stepEnd,
  stepStart,
  testHeader,
  text,
  toolCall,
  toolResult,
  turnEnd,
  turnStart,
  userMessage,
} from "../helpers/builders.js";
import { corpusLogs } from "../helpers/corpus.js";
import { COMPACTION, compactionLog } from "../helpers/store-builders.js";

/** The role of each surface-eligible type, as docs/log.md lists them. */
const ROLE: ReadonlyMap<string, "user" | "assistant"> = new Map([
  ["user/message", "user"],
  ["tool/result", "user"],
  ["context/message", "user"],
  ["steering/message", "user"],
  ["assistant/message", "assistant"],
]);

/**
 * The roles of the messages a log should produce, found by walking it with the test's own
 * surface (a list of seqs, replace splicing it); an empty assistant message produces none.
 */
function expectedRoles(events: readonly SessionEvent[]): ("user" | "assistant")[] {
  const surface: { seq: number; role: "user" | "assistant" | undefined }[] = [];
  for (const event of events) {
    const role = ROLE.get(event.type);
    if (role === undefined || !("surfaceOp" in event)) continue;
    const empty = event.type === "assistant/message" && event.data.content.length === 0;
    const node = { seq: event.seq, role: empty ? undefined : role };
    const op = event.surfaceOp;
    if (op === "append") {
      surface.push(node);
    } else {
      const from = surface.findIndex((n) => n.seq === op.start);
      const to = surface.findIndex((n) => n.seq === op.end);
      surface.splice(from, to - from + 1, node);
    }
  }
  return surface.flatMap((n) => (n.role === undefined ? [] : [n.role]));
}

const corpus = corpusLogs().filter((log) => log.events.length > 0);

describe("deriveMessages on the recorded corpus", () => {
  it.each(corpus.map((log) => [log.name, log] as const))(
    "gives one message per message-producing surface event of %s, with matching roles",
    (_name, log) => {
      const events = log.events as SessionEvent[];
      const roles = expectedRoles(events);
      const messages = deriveMessages(events);
      expect(messages).toHaveLength(roles.length);
      expect(messages.map((m) => m.role)).toEqual(roles);
    },
  );

  it.each(corpus.map((log) => [log.name, log] as const))(
    "gives the same messages through Session.deriveMessages for %s",
    async (_name, log) => {
      const store = new SessionStore();
      const session = await store.create({ id: "corpus", seed: log.events as SessionEvent[] });
      expect(session.deriveMessages()).toEqual(deriveMessages(log.events as SessionEvent[]));
    },
  );

  it("finds at least one of every surface type across the corpus", () => {
    const types = new Set(
      corpus.flatMap((log) => (log.events as SessionEvent[]).map((e) => e.type)),
    );
    for (const type of ROLE.keys()) expect(types).toContain(type);
  });
});

describe("message shapes", () => {
  const plugin = { kind: "plugin", plugin: "guard" } as const;
  const events: SessionEvent[] = [
    turnStart(0, 1),
    userMessage(1, "list files"),
    stepStart(2, 1, 1),
    assistantMessage(3, 1, 1, [{ type: "tool-call", id: "c1", name: "ls", arguments: "{}" }]),
    toolCall(4, 1, 1, "c1", "ls"),
    toolResult(5, 1, 1, "c1", {
      sourceEventSeqs: [4],
      output: "no such dir",
      isError: true,
      error: { name: "ENOENT", code: "ENOENT" },
      meta: { note: "never reaches messages" },
    }),
    assistantMessage(6, 1, 1, [], { sourceEventSeqs: [3] }),
    stepEnd(7, 1, 1),
    steeringMessage(8, 1, "stay in the repo", { source: plugin }),
    turnEnd(9, 1),
    contextMessage(10, "AGENTS.md says hi"),
  ];

  it("maps each surface type to its message, skipping an empty assistant message", () => {
    expect(deriveMessages(events)).toEqual([
      { role: "user", content: [text("list files")] },
      {
        role: "assistant",
        content: [{ type: "tool-call", id: "c1", name: "ls", arguments: "{}" }],
      },
      {
        role: "user",
        content: [
          {
            type: "tool-result",
            toolCallId: "c1",
            content: [text("no such dir")],
            isError: true,
          },
        ],
      },
      {
        role: "user",
        content: [
          text('<steering source="plugin">'),
          text("stay in the repo"),
          text("</steering>"),
        ],
      },
      {
        role: "user",
        content: [text('<context source="user">'), text("AGENTS.md says hi"), text("</context>")],
      },
    ]);
  });

  it("puts a tool result in one tool-result block with callId, content and isError", () => {
    const [, , result] = deriveMessages(events);
    expect(result?.content).toHaveLength(1);
    expect(Object.keys(result?.content[0] ?? {}).sort()).toEqual(
      ["content", "isError", "toolCallId", "type"].sort(),
    );
    const ok = deriveMessages([...simpleTurn(0, 1, { toolCallsPerStep: 1 })]).find(
      (m) => m.content[0]?.type === "tool-result",
    );
    expect(ok?.content).toEqual([
      { type: "tool-result", toolCallId: "call-1-1-0", content: [text("ok")], isError: false },
    ]);
  });

  it("quotes the source kind with JSON.stringify in context and steering tags", () => {
    const messages = deriveMessages([
      contextMessage(0, "from a plugin", { source: plugin }),
      turnStart(1, 1),
      steeringMessage(2, 1, "from the user"),
      turnEnd(3, 1),
    ]);
    expect(messages.map((m) => m.content[0])).toEqual([
      text(`<context source=${JSON.stringify("plugin")}>`),
      text(`<steering source=${JSON.stringify("user")}>`),
    ]);
    expect(messages.map((m) => m.content.at(-1))).toEqual([
      text("</context>"),
      text("</steering>"),
    ]);
  });

  it("keeps every block of a multi-block context between the tags, in order", () => {
    const blocks = [text("one"), { type: "reasoning", text: "two" } as const, text("three")];
    const event: SessionEvent = {
      type: "context/message",
      seq: 0,
      time: 0,
      data: { content: blocks, source: { kind: "user" } },
      surfaceOp: "append",
    };
    expect(deriveMessages([event])).toEqual([
      { role: "user", content: [text('<context source="user">'), ...blocks, text("</context>")] },
    ]);
  });

  it("gives no messages for a log without surface events", () => {
    expect(deriveMessages([])).toEqual([]);
    expect(deriveMessages([turnStart(0, 1), turnEnd(1, 1)])).toEqual([]);
  });
});

describe("replace (compaction)", () => {
  const events = compactionLog();
  const ctx: DerivedMessage = {
    role: "user",
    content: [text('<context source="user">'), text("repo notes"), text("</context>")],
  };
  const q1: DerivedMessage = { role: "user", content: [text("q1")] };
  const a1: DerivedMessage = {
    role: "assistant",
    content: [text("a1"), { type: "tool-call", id: "c1", name: "bash", arguments: "{}" }],
  };
  const r1: DerivedMessage = {
    role: "user",
    content: [{ type: "tool-result", toolCallId: "c1", content: [text("r1")], isError: false }],
  };
  const a2: DerivedMessage = { role: "assistant", content: [text("a2")] };
  const summary: DerivedMessage = { role: "user", content: [text("the story so far")] };
  const a3: DerivedMessage = { role: "assistant", content: [text("a3")] };

  it("derives every node before the compaction", () => {
    expect(deriveMessages(events.slice(0, COMPACTION.summarySeq + 1))).toEqual([
      ctx,
      q1,
      a1,
      r1,
      a2,
    ]);
  });

  it("swaps the three shadowed nodes for the summary, keeping the nodes around them", () => {
    expect(deriveMessages(events.slice(0, COMPACTION.replaceSeq + 1))).toEqual([ctx, summary, a2]);
  });

  it("continues later appends after the summary", () => {
    expect(deriveMessages(events)).toEqual([ctx, summary, a2, a3]);
    const more = [...events, userMessage(events.length, "q3")];
    expect(deriveMessages(more)).toEqual([
      ctx,
      summary,
      a2,
      a3,
      { role: "user", content: [text("q3")] },
    ]);
  });

  it("gives the same result through a session, as of each seq", async () => {
    const session = await new SessionStore().create({ id: "compacted", seed: events });
    expect(session.deriveMessages()).toEqual([ctx, summary, a2, a3]);
    expect(await session.deriveMessages(COMPACTION.summarySeq)).toEqual([ctx, q1, a1, r1, a2]);
    expect(await session.deriveMessages(COMPACTION.replaceSeq)).toEqual([ctx, summary, a2]);
  });

  it("matches the test's own surface walk", () => {
    expect(deriveMessages(events).map((m) => m.role)).toEqual(expectedRoles(events));
  });
});

/** Logs to derive incrementally: the compaction log and a few corpus logs with every surface type. */
const incrementalLogs: [string, SessionEvent[]][] = [
  ["the compaction log", compactionLog()],
  ...corpus
    .filter((log) =>
      [
        "subagent-mixed/session.jsonl",
        "hook-cc-posttool-context/session.jsonl",
        "tool-call-turn/session.jsonl",
      ].includes(log.name),
    )
    .map((log): [string, SessionEvent[]] => [log.name, log.events as SessionEvent[]]),
];

describe("incremental derivation", () => {
  it("uses the corpus logs it names", () => {
    expect(incrementalLogs).toHaveLength(4);
  });

  it.each(incrementalLogs)(
    "equals deriving from scratch after each append (%s)",
    (_name, events) => {
      const log = SessionLog.fromSeed(testHeader(), []);
      for (const [i, event] of events.entries()) {
        log.append([event]);
        expect(log.deriveMessages()).toEqual(deriveMessages(events.slice(0, i + 1)));
      }
    },
  );

  it("equals deriving from scratch after each store append", async () => {
    const events = compactionLog();
    const session = await new SessionStore().create({ id: "incremental" });
    for (const [i, event] of events.entries()) {
      await expect(session.append([event])).resolves.toBe(i + 1);
      expect(session.deriveMessages()).toEqual(deriveMessages(events.slice(0, i + 1)));
    }
  });

  it.each(incrementalLogs)(
    "gives the messages as of each seq with throughSeq (%s)",
    async (_name, events) => {
      const session = await new SessionStore().create({ id: "through", seed: events });
      for (let seq = 0; seq < events.length; seq++) {
        expect(await session.deriveMessages(seq)).toEqual(deriveMessages(events.slice(0, seq + 1)));
      }
    },
  );

  it("returns frozen results that cannot be changed, and leave the log as it was", async () => {
    const events = compactionLog();
    const session = await new SessionStore().create({ id: "frozen", seed: events });
    const before = JSON.stringify(await session.readEvents());
    for (const messages of [
      session.deriveMessages(),
      await session.deriveMessages(5),
      deriveMessages(events),
    ]) {
      expect(Object.isFrozen(messages)).toBe(true);
      for (const message of messages) {
        expect(Object.isFrozen(message)).toBe(true);
        expect(Object.isFrozen(message.content)).toBe(true);
        for (const block of message.content) expect(Object.isFrozen(block)).toBe(true);
      }
      const mutable = messages as DerivedMessage[];
      expect(() => mutable.push({ role: "user", content: [] })).toThrow(TypeError);
      expect(() => mutable.pop()).toThrow(TypeError);
      const first = messages[0] as { role: string; content: unknown[] };
      expect(() => {
        first.role = "assistant";
      }).toThrow(TypeError);
      expect(() => first.content.push(text("extra"))).toThrow(TypeError);
      const block = first.content[1] as { text: string };
      expect(() => {
        block.text = "changed";
      }).toThrow(TypeError);
    }
    expect(JSON.stringify(await session.readEvents())).toBe(before);
    expect(session.deriveMessages()).toEqual(deriveMessages(compactionLog()));
  });

  it("derives frozen messages from a caller's plain events without freezing or aliasing them", () => {
    const events = compactionLog();
    const before = JSON.stringify(events);
    const messages = deriveMessages(events);
    for (const message of messages) {
      for (const block of message.content) expect(Object.isFrozen(block)).toBe(true);
    }
    const block = messages[1]?.content[0] as { text: string };
    expect(() => {
      block.text = "changed";
    }).toThrow(TypeError);
    expect(JSON.stringify(events)).toBe(before);
    for (const event of events) {
      expect(Object.isFrozen(event)).toBe(false);
      expect(Object.isFrozen(event.data)).toBe(false);
      if ("content" in event.data) expect(Object.isFrozen(event.data.content)).toBe(false);
    }
  });

  it("keeps an earlier result unchanged by later appends", async () => {
    const session = await new SessionStore().create({ id: "snapshot" });
    await session.append(simpleTurn(0, 1));
    const earlier = session.deriveMessages();
    const copy = JSON.parse(JSON.stringify(earlier));
    await session.append(simpleTurn(7, 2));
    expect(earlier).toEqual(copy);
    expect(session.deriveMessages()).toHaveLength(earlier.length + 2);
  });

  it("refuses a surface-eligible event without surfaceOp with the marker rule's error, not a TypeError", () => {
    // Seen failing before the fix: TypeError (reading 'start' of undefined) from the surface.
    const { surfaceOp: _dropped, ...unmarked } = userMessage(1, "no marker");
    const events = [turnStart(0, 1), unmarked] as unknown as SessionEvent[];
    let error: unknown;
    try {
      deriveMessages(events);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(InvalidEventError);
    expect((error as InvalidEventError).code).toBe("INVALID_EVENT");
    expect((error as InvalidEventError).details).toEqual({
      seq: 1,
      index: 1,
      rule: "surface-marker",
      instancePath: "",
      problems: [
        {
          seq: 1,
          index: 1,
          rule: "surface-marker",
          instancePath: "",
          message: "expected surfaceOp on user/message (a surface-eligible type), got none",
        },
      ],
      problemCount: 1,
    });
    // The same rule and details a log gives when the event is seeded.
    let admitted: unknown;
    try {
      SessionLog.fromSeed(testHeader(), events);
    } catch (caught) {
      admitted = caught;
    }
    expect((admitted as InvalidEventError).details).toEqual((error as InvalidEventError).details);
  });
});
