// `seedline demo`: spawns `seedline serve` on a temporary store and drives it as a client, narrating every call.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { extname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { SeedlineClient } from "../../client/seedline-client.js";
import type { ReplayEntry, SessionEvent } from "../../generated.js";
import { assembleMessage } from "../../replay/assemble.js";
import { packageInfo } from "../../rpc/package-info.js";
import { type CommandSpec, EXIT_OK } from "../command.js";
import { FakeAgent } from "../demo/fake-agent.js";
import { CALL, Narrator } from "../demo/narrate.js";
import { excerpt, plural } from "../output.js";

const BACKENDS = ["sqlite", "jsonl"] as const;

export const demoCommand: CommandSpec = {
  name: "demo",
  summary: "watch a client record, fork and replay sessions through seedline serve",
  synopsis: `[--backend ${BACKENDS.join("|")}] [--keep]`,
  description: `
Spawns \`seedline serve\` on a temporary store and drives it over JSON-RPC as an agent harness
would, printing each request (→) and response (←) with long arrays summarised:
  1. handshake (initialize);
  2. record a session from a scripted fake agent: a turn whose first step streams chunks, writes
     the assistant message and calls a tool, and whose second step answers; then a second turn;
  3. fork it at the end of the first (completed) turn;
  4. append the child's own turn;
  5. list the sessions (the child points at its parent);
  6. derive the replay scripts of the tree (the child's sliced at its seed boundary), open a
     replay and serve its entries to two live callers, then show that replay fails loudly past
     the end of a script.
Needs no fixture file. The temporary store is removed at the end unless --keep is given.`,
  options: {
    backend: {
      type: "string",
      arg: "KIND",
      choices: BACKENDS,
      description: "the kind of temporary store (default: sqlite)",
    },
    keep: {
      type: "boolean",
      description: "keep the temporary store and print its URL (inspect it with ls/show)",
    },
  },
  positionals: { name: "", min: 0, max: 0 },
  async run({ args, out }) {
    const dir = mkdtempSync(join(tmpdir(), "seedline-demo-"));
    const url =
      args.values.backend === "jsonl"
        ? `jsonl:${join(dir, "sessions")}`
        : `sqlite:${join(dir, "sessions.db")}`;
    const title = "seedline demo: a scripted fake agent drives `seedline serve` over JSON-RPC";
    out.out(`${out.paint.bold(title)}\nstore: ${url} (temporary)\n`);
    const client = SeedlineClient.spawn({
      command: process.execPath,
      args: [...process.execArgv, MAIN, "serve", "--store", url],
      cwd: dir,
    });
    const n = new Narrator(out, client);
    try {
      await scenario(n, dir);
    } finally {
      await client.close();
      if (args.values.keep) {
        n.line(`\nkept the store: seedline ls --store ${url}`);
      } else {
        rmSync(dir, { recursive: true, force: true });
        n.line(`\nremoved the temporary store ${dir}`);
      }
    }
    return EXIT_OK;
  },
};

/** The CLI entry next to this command (main.js built, main.ts under tsx), run again as the server. */
const MAIN = fileURLToPath(new URL(`../main${extname(import.meta.url)}`, import.meta.url));

const PRIMARY = "demo";
const CHILD = "demo-fork";

async function scenario(n: Narrator, cwd: string): Promise<void> {
  n.section("Handshake");
  const hello = await n.request(CALL.initialize, {
    protocolVersion: 1,
    clientInfo: { name: "seedline-demo", version: packageInfo().version },
  });
  n.done(`talking to ${hello.agentInfo.name} ${hello.agentInfo.version}`);

  n.section("Record a session from a scripted fake agent");
  const created = await n.request(CALL.sessionCreate, { sessionId: PRIMARY, cwd });
  n.done(`created session ${created.sessionId}`);
  const append = async (sessionId: string, events: SessionEvent[], what: string) => {
    const { nextSeq } = await n.request(CALL.sessionAppend, { sessionId, events });
    n.done(
      `appended ${plural(events.length, "event")} to ${sessionId} (${what}); next seq ${nextSeq}`,
    );
    return nextSeq;
  };
  const agent = new FakeAgent({ nextSeq: 0, lastTurn: 0 }, Date.now());
  await append(
    PRIMARY,
    [
      ...agent.startTurn("Which files are in this folder?"),
      ...agent.step(1, {
        text: "Let me list them.",
        toolCall: { name: "list_files", arguments: { path: "." }, result: "notes.txt\nplan.md" },
      }),
    ],
    "turn 1, step 1: streamed chunks, assistant message, list_files call and result",
  );
  const afterTurnOne = await append(
    PRIMARY,
    [...agent.step(2, { text: "There are two files: notes.txt and plan.md." }), ...agent.endTurn()],
    "turn 1, step 2: the answer; turn 1 completed",
  );
  await append(
    PRIMARY,
    [
      ...agent.startTurn("Summarise plan.md in one line."),
      ...agent.step(1, { text: "Ship the CLI first, then the docs." }),
      ...agent.endTurn(),
    ],
    "turn 2",
  );

  n.section("Fork at the completed first turn");
  const boundary = afterTurnOne - 1;
  const fork = await n.request(CALL.sessionFork, {
    sessionId: PRIMARY,
    boundary,
    childSessionId: CHILD,
  });
  const seedLength = fork.header.seedLength ?? 0;
  n.done(
    `forked ${PRIMARY} at seq ${boundary} into ${fork.sessionId} (${plural(seedLength, "inherited event")}, seedLength in its header)`,
  );

  n.section("Append the child's own turn");
  const childAgent = new FakeAgent({ nextSeq: seedLength, lastTurn: 1 }, agent.time);
  await append(
    CHILD,
    [
      ...childAgent.startTurn("Instead: what does notes.txt say?"),
      ...childAgent.step(1, {
        text: "Reading it.",
        toolCall: {
          name: "read_file",
          arguments: { path: "notes.txt" },
          result: "Water the plants.",
        },
      }),
      ...childAgent.step(2, { text: "It says: water the plants." }),
      ...childAgent.endTurn(),
    ],
    "turn 2 of the fork, numbered after the inherited turn 1",
  );

  n.section("List the sessions");
  const list = await n.request(CALL.sessionList, {});
  for (const s of list.sessions) {
    const parent =
      s.header.parentSession === undefined ? "" : `, forked from ${s.header.parentSession}`;
    n.done(`${s.sessionId}: ${plural(s.eventCount, "event")}${parent}`);
  }

  n.section("Derive and serve replay scripts");
  const derived = await n.request(CALL.replayScripts, { sessionId: PRIMARY });
  for (const s of derived.scripts) {
    const sliced = s.seedLength > 0 ? `, derived after its ${s.seedLength} inherited events` : "";
    n.done(`script of ${s.sessionId}: ${plural(s.entries.length, "model call")}${sliced}`);
  }
  const { replayId, scripts } = await n.request(CALL.replayOpen, { sessionId: PRIMARY });
  n.done(`opened replay ${replayId} over ${plural(scripts, "script")}`);
  let served = 0;
  for (const [callerSessionId, calls] of [
    ["agent-under-test-1", 3],
    ["agent-under-test-2", 2],
  ] as const) {
    for (let i = 0; i < calls; i++) {
      const next = await n.request(CALL.replayNext, { replayId, callerSessionId });
      served++;
      n.done(
        `served replay entry ${next.index} of ${next.sessionId} to ${callerSessionId}: ${describeEntry(next.entry)}`,
      );
    }
  }
  await n.refused(
    CALL.replayNext,
    { replayId, callerSessionId: "agent-under-test-1" },
    "REPLAY_EXHAUSTED",
  );
  n.done(
    "asking past the end of a script fails loudly (REPLAY_EXHAUSTED): replay never invents a response",
  );
  await n.request(CALL.replayClose, { replayId });
  n.done(`replay entries served: ${served}`);
}

/** What a replayed model call produces, as the caller would enact it. */
function describeEntry(entry: ReplayEntry): string {
  const parts = assembleMessage(entry.chunks).map((block) => {
    switch (block.type) {
      case "text":
        return JSON.stringify(excerpt(block.text, 48));
      case "tool-call":
        return `a ${block.name} call`;
      default:
        return block.type;
    }
  });
  const then =
    entry.kind === "throw" ? ", then an error" : entry.kind === "hang" ? ", then a hang" : "";
  return `${plural(entry.chunks.length, "chunk")} → ${parts.join(" + ")}${then}`;
}
