// `seedline export --format html`: one self-contained file whose embedded data holds hostile log text as text (no `</script>` can close it), read back equal.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SessionEvent } from "../../src/generated.js";
import { openBackend } from "../../src/store/open/open-backend.js";
import { SessionStore } from "../../src/store/session-store.js";
import type { ViewItem } from "../../src/view/view-items.js";
import { EXPORT_CSP, scriptSafeJson } from "../../src/viewer/server/export-html.js";
import {
  assistantMessage,
  stepEnd,
  stepStart,
  text,
  toolCall,
  toolResult,
  turnEnd,
  turnStart,
  userMessage,
} from "../helpers/builders.js";
import { seedline } from "../helpers/cli-harness.js";
import { CORPUS_DIR } from "../helpers/corpus.js";

const CORPUS = CORPUS_DIR;
const PARENT = "f2358dc0-75f8-4649-8440-ab94b8e10dc3";
const CHILD = "906f1eac-a457-4eb9-828b-1ba537552524";
const HOSTILE = "hostile-session";

/** Text a log may hold that would run as HTML if it were ever put into a page as markup. */
const PROMPT = 'Look: </script><script>alert("prompt")</script> and <img src=x onerror="alert(1)">';
const OUTPUT = "<!-- </SCRIPT > <img src=x onerror=alert(2)> & \u2028 line \u2029 end </script";
const ARGS = JSON.stringify({ html: "</script><img src=x onerror=alert(3)>" });

let temp: string;
let storeUrl: string;

beforeAll(async () => {
  temp = mkdtempSync(join(tmpdir(), "seedline-viewer-export-"));
  storeUrl = `sqlite:${join(temp, "export.db")}`;
  const imported = seedline([
    "import",
    join(CORPUS, "subagent-fork", "session.jsonl"),
    join(CORPUS, "subagent-fork", "session.1.jsonl"),
    "--store",
    storeUrl,
  ]);
  expect(imported.status, imported.stderr).toBe(0);
  const store = new SessionStore({ backend: await openBackend(storeUrl) });
  try {
    const session = await store.create({ id: HOSTILE });
    const events: SessionEvent[] = [
      turnStart(0, 1),
      userMessage(1, PROMPT),
      stepStart(2, 1, 1),
      assistantMessage(3, 1, 1, [
        text("<b>not bold</b>"),
        { type: "tool-call", id: "c1", name: "html", arguments: ARGS },
      ]),
      toolCall(4, 1, 1, "c1", "html", ARGS),
      toolResult(5, 1, 1, "c1", { sourceEventSeqs: [4], output: OUTPUT }),
      stepEnd(6, 1, 1),
      turnEnd(7, 1),
    ];
    await store.append(session, events);
  } finally {
    await store.close();
  }
});

afterAll(() => {
  rmSync(temp, { recursive: true, force: true });
});

const OPEN_DATA = '<script type="application/json" id="seedline-data">';

/** The export of a session, and its data block as written and as parsed back. */
function exported(id: string) {
  const run = seedline(["export", id, "--format", "html", "--store", storeUrl]);
  expect(run.stderr).toBe("");
  expect(run.status).toBe(0);
  const html = run.stdout;
  const start = html.indexOf(OPEN_DATA);
  expect(start).toBeGreaterThan(0);
  const from = start + OPEN_DATA.length;
  const rawData = html.slice(from, html.indexOf("</script>", from));
  return { html, rawData, data: JSON.parse(rawData) };
}

describe("seedline export --format html", () => {
  // Seen failing with JSON.stringify alone in place of scriptSafeJson: the data block ended at the
  // prompt's "</script>", and what followed was read as markup.
  it("keeps hostile log text inside the data block, and gives it back unchanged", () => {
    const { html, rawData, data } = exported(HOSTILE);
    expect(rawData).not.toMatch(/[<>&\u2028\u2029]/);
    expect(rawData.toLowerCase()).not.toContain("</script");
    const items = data.timeline.items as ViewItem[];
    expect(items.find((i) => i.kind === "message")).toMatchObject({ role: "user", text: PROMPT });
    expect(items.find((i) => i.kind === "tool-result")).toMatchObject({ text: OUTPUT });
    const call = items.find((i) => i.kind === "tool-call");
    expect(call?.kind === "tool-call" && JSON.parse(call.arguments)).toEqual(JSON.parse(ARGS));
    expect(items.find((i) => i.kind === "assistant")).toMatchObject({ text: "<b>not bold</b>" });
    // Only the file's own elements close: the data block and the inlined app.
    expect(html.match(/<\/script/gi)).toHaveLength(2);
    expect(html).not.toContain("<img");
  });

  it("is one file that loads nothing: the app inlined under a CSP that allows no connection", () => {
    const { html } = exported(HOSTILE);
    expect(html).toContain(`<meta http-equiv="Content-Security-Policy" content="${EXPORT_CSP}">`);
    expect(EXPORT_CSP).toContain("default-src 'none'");
    expect(html).not.toMatch(/<script[^>]+src=/i);
    expect(html).not.toMatch(/<link[^>]+href=/i);
    expect(html).toContain('<div id="app"></div>');
    expect(html).toMatch(/<style>[\s\S]+<\/style>/);
  });

  it("embeds a fork's header, lineage, every timeline item, and its replay script", () => {
    const { data } = exported(CHILD.slice(0, 8));
    expect(data.session.sessionId).toBe(CHILD);
    expect(data.header).toMatchObject({ parentSession: PARENT, seedLength: 38 });
    expect(data.lineage).toMatchObject({ sessionId: PARENT });
    expect(data.lineage.children[0]).toMatchObject({ sessionId: CHILD, branchTurn: 1 });
    const items = data.timeline.items as ViewItem[];
    expect(items.filter((i) => i.kind === "seed-boundary")).toEqual([
      { kind: "seed-boundary", seq: 38, inherited: 38 },
    ]);
    expect(items.filter((i) => i.kind === "turn").map((i) => i.seq)).toEqual([0, 38]);
    expect(items.some((i) => i.kind === "assistant" && i.partial)).toBe(false);
    expect(data.replay).toMatchObject({ sessionId: CHILD, seedLength: 38 });
    expect(data.replay.entries).toHaveLength(1);
  });

  it("writes JSON that no string can break out of, and that parses back to the same value", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary" }), (s) => {
        const json = scriptSafeJson({ s });
        expect(json).not.toMatch(/[<>&\u2028\u2029]/);
        expect(JSON.parse(json)).toEqual({ s });
      }),
    );
  });
});
