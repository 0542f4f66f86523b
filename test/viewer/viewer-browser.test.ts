// The session viewer in a real browser: `seedline ui` spawned on a SQLite store holding the corpus, driven in the distribution's headless Chromium.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedline } from "../helpers/cli-harness.js";
import { CORPUS_DIR, corpusLogs } from "../helpers/corpus.js";
import {
  appendFromAnotherProcess,
  browserUnavailable,
  launchBrowser,
  recordFromAnotherProcess,
  screenshot,
  startViewer,
  userTurn,
  type Viewer,
} from "../helpers/viewer-browser-harness.js";

const unavailable = browserUnavailable();

/** The id in line 1 of a corpus log. */
function corpusId(name: string): string {
  const log = corpusLogs().find((l) => l.name === name);
  if (log === undefined) throw new Error(`expected the corpus to hold ${name}`);
  return (log.header as { id: string }).id;
}

const FORK_CHILD = corpusId("subagent-fork/session.1.jsonl");
const FORK_PARENT = corpusId("subagent-fork/session.jsonl");
const TOOL_SESSION = corpusId("fs-read/session.jsonl");
const MULTI_TURN = corpusId("multi-turn/session.jsonl");
/** A subagent spawned by its parent: a child with no seed, not a fork. */
const SPAWNED = corpusId("subagent-spawn/session.1.jsonl");
const HOSTILE = "viewer-hostile";
const LIVE = "viewer-live";
/** A session of 600 one-message turns (1,800 events): four timeline pages. */
const LONG = "viewer-long";
const LONG_TURNS = 600;
/** A session recorded with a tool call whose output is 40 lines, then a cancelled turn. */
const TOOLS = "viewer-tools";
/** A session whose one step streams 700 chunks: longer than a timeline page. */
const LONG_STEP = "viewer-long-step";
const LONG_STEP_CHUNKS = 700;
const TOOL_OUTPUT = Array.from({ length: 40 }, (_, i) => `line ${i + 1}`).join("\n");
/** Text a log may hold that would run script if it were rendered as HTML. */
const HOSTILE_TEXT =
  'look: <script>window.__seedlinePwned = 1</script> and <img src=x onerror="window.__seedlinePwned = 2"> end';

/**
 * What the tests read of the page's globals inside page.evaluate (the tests are typechecked
 * without the DOM lib, which would hide Node code that reaches for browser globals). Written out
 * in each callback: page.evaluate sends the callback's source, not its closure.
 */
interface PageGlobals {
  __seedlinePwned?: number;
  __sameDocument?: boolean;
  getComputedStyle(element: unknown): { borderTopStyle: string };
  scrollTo(x: number, y: number): void;
  document: { activeElement: { id: string } | null; body: { scrollHeight: number } };
}

/** A path of the viewer, for page.goto. */
const at = (viewer: Viewer, path: string) => `${viewer.origin}${path}`;
const enc = encodeURIComponent;

describe.skipIf(unavailable !== undefined)(
  `seedline ui in headless Chromium${unavailable === undefined ? "" : ` (skipped: ${unavailable})`}`,
  () => {
    let temp: string;
    let store: string;
    let viewer: Viewer;
    let browser: Browser;
    let context: BrowserContext;
    let page: Page;
    const pageErrors: string[] = [];

    beforeAll(async () => {
      temp = mkdtempSync(join(tmpdir(), "seedline-viewer-browser-"));
      store = `sqlite:${join(temp, "store.db")}`;
      const run = seedline(["import", CORPUS_DIR, "--store", store]);
      // A few corpus logs share an id with another: the import reports them and stores the rest.
      expect(run.stderr).toContain("imported");
      appendFromAnotherProcess(store, HOSTILE, userTurn(1, HOSTILE_TEXT), true);
      appendFromAnotherProcess(store, LIVE, userTurn(1, "a session written while watched"), true);
      const long = Array.from({ length: LONG_TURNS }, (_, i) =>
        userTurn(i + 1, `message ${i + 1}`),
      );
      appendFromAnotherProcess(store, LONG, long.flat(), true);
      recordFromAnotherProcess(store, TOOLS, [
        { op: "turn_start", prompt: "List the folder." },
        { op: "step_start" },
        {
          op: "chunks",
          chunks: [
            { type: "text-delta", index: 0, text: "Listing." },
            {
              type: "tool-call-delta",
              index: 1,
              id: "c1",
              name: "ls",
              argumentsDelta: '{"path":"/work","all":true}',
            },
            { type: "finish", reason: { kind: "tool-calls" } },
          ],
        },
        { op: "tool_result", callId: "c1", content: TOOL_OUTPUT },
        { op: "step_end" },
        { op: "turn_end" },
        { op: "turn_start", prompt: "Now stop halfway." },
        { op: "step_start" },
        { op: "chunks", chunks: [{ type: "text-delta", index: 0, text: "Work" }] },
        { op: "turn_end", reason: { kind: "aborted" } },
      ]);
      const deltas = Array.from({ length: LONG_STEP_CHUNKS }, (_, i) => ({
        type: "text-delta",
        index: 0,
        text: `w${i + 1} `,
      }));
      recordFromAnotherProcess(store, LONG_STEP, [
        { op: "turn_start", prompt: "Say a lot." },
        { op: "step_start" },
        { op: "chunks", chunks: [...deltas, { type: "finish", reason: { kind: "stop" } }] },
        { op: "step_end" },
        { op: "turn_end" },
      ]);
      viewer = await startViewer(store);
      browser = await launchBrowser();
      context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
      page = await context.newPage();
      page.on("pageerror", (error) => pageErrors.push(String(error)));
      // The printed address (with its token): the page keeps the token for the pages after it.
      await page.goto(viewer.url);
    });

    afterAll(async () => {
      await browser?.close();
      await viewer?.stop();
      if (temp !== undefined) rmSync(temp, { recursive: true, force: true });
    });

    it("lists the corpus sessions with their titles, the fork marked", async () => {
      await page.goto(viewer.url);
      const rows = page.getByTestId("session-row");
      await rows.first().waitFor();
      expect(await rows.count()).toBeGreaterThanOrEqual(20);
      const titles = await page.locator(".session-row .title").allTextContents();
      expect(titles).toContain("Reply with the single word FIRST and stop.");
      const child = page.locator(`[data-testid="session-row"][data-id="${FORK_CHILD}"]`);
      await expect(child.getByTestId("fork-mark").textContent()).resolves.toBe("fork");
      const parent = page.locator(`[data-testid="session-row"][data-id="${FORK_PARENT}"]`);
      expect(await parent.getByTestId("fork-mark").count()).toBe(0);
      const spawned = page.locator(`[data-testid="session-row"][data-id="${SPAWNED}"]`);
      expect(await spawned.getByTestId("child-mark").textContent()).toBe("child");
      expect(await spawned.getByTestId("fork-mark").count()).toBe(0);
      // The token left the address bar once the page held it.
      expect(page.url()).not.toContain("token=");
      await screenshot(page, "list");
    });

    it("refuses requests without the token", async () => {
      for (const path of ["/api/sessions", `/api/sessions/${enc(FORK_CHILD)}`]) {
        const response = await fetch(at(viewer, path));
        expect(response.status, path).toBe(401);
        expect(await response.text()).toContain("needs the token");
      }
      // A browser that never had the token gets the app, which shows the refusal and no session.
      const stranger = await browser.newContext();
      try {
        const other = await stranger.newPage();
        const response = await other.goto(at(viewer, "/"));
        expect(response?.status()).toBe(200);
        const error = other.locator(".error");
        await error.first().waitFor();
        expect(await error.first().textContent()).toContain("needs the token");
        expect(await other.getByTestId("session-row").count()).toBe(0);
      } finally {
        await stranger.close();
      }
      // With the token it answers.
      const ok = await fetch(at(viewer, "/api/sessions"), {
        headers: { authorization: `Bearer ${viewer.token}` },
      });
      expect(ok.status).toBe(200);
    });

    it("opens a deep link in a new tab with the token the first page kept", async () => {
      const tab = await context.newPage();
      try {
        await tab.goto(at(viewer, `/s/${enc(FORK_CHILD)}`));
        await tab.getByTestId("seed-boundary").first().waitFor();
        expect(tab.url()).not.toContain("token=");
      } finally {
        await tab.close();
      }
    });

    it("searches message text and links each excerpt to its event", async () => {
      await page.goto(at(viewer, "/"));
      await page.getByTestId("search").fill("MARMALADE");
      const results = page.getByTestId("search-result");
      await results.first().waitFor();
      const ids = await results.evaluateAll((els) => els.map((el) => el.getAttribute("data-id")));
      expect(ids).toEqual(expect.arrayContaining([FORK_PARENT, FORK_CHILD]));
      const marks = await page.locator('[data-testid="search-results"] mark').allTextContents();
      expect(marks.length).toBeGreaterThan(0);
      for (const mark of marks) expect(mark.toLowerCase()).toBe("marmalade");
      expect(page.url()).toContain("q=MARMALADE");
      await screenshot(page, "search");
      // A common word matches more sessions than one page of results holds: the next page on demand.
      await page.getByTestId("search").fill("the");
      await page.getByTestId("more-results").waitFor();
      const firstPage = await results.count();
      await page.getByTestId("more-results").click();
      await results.nth(firstPage).waitFor();
      const all = await results.evaluateAll((els) => els.map((el) => el.getAttribute("data-id")));
      expect(new Set(all).size).toBe(all.length);
    });

    it("draws the recorded fork's lineage, its seed length and the turn it branched after", async () => {
      await page.goto(at(viewer, `/s/${enc(FORK_CHILD)}/lineage`));
      const child = page.locator(`[data-testid="lineage-node"][data-id="${FORK_CHILD}"]`);
      await child.waitFor();
      expect(await child.getAttribute("class")).toContain("current");
      expect(await child.getByTestId("seed-length").textContent()).toBe("seed 38");
      const parent = page.locator(`[data-testid="lineage-node"][data-id="${FORK_PARENT}"]`);
      expect(await parent.count()).toBe(1);
      // The seed (38 events) ends after turn 1: the parent lists the fork there.
      const group = page.getByTestId("branch-group");
      expect(await group.getAttribute("data-turn")).toBe("1");
      expect(await group.locator(".branch-label").textContent()).toBe("forks after turn 1");
      await screenshot(page, "lineage");
    });

    it("draws the seed boundary as a line and dims the inherited part", async () => {
      await page.goto(at(viewer, `/s/${enc(FORK_CHILD)}`));
      const boundary = page.getByTestId("seed-boundary");
      await boundary.waitFor();
      expect(await boundary.textContent()).toContain("38 events inherited");
      const rows = await page
        .locator(".timeline > .row")
        .evaluateAll((els) =>
          els.map(
            (el) =>
              [
                Number(el.getAttribute("data-seq")),
                el.classList.contains("inherited"),
                el.getAttribute("data-kind"),
              ] as const,
          ),
        );
      const inherited = rows.filter(([, dim, kind]) => dim && kind !== "seed-boundary");
      const own = rows.filter(([, dim, kind]) => !dim && kind !== "seed-boundary");
      expect(inherited.length).toBeGreaterThan(0);
      expect(own.length).toBeGreaterThan(0);
      for (const [seq] of inherited) expect(seq).toBeLessThan(38);
      for (const [seq] of own) expect(seq).toBeGreaterThanOrEqual(38);
      const line = await boundary.evaluate(
        (el) => (globalThis as unknown as PageGlobals).getComputedStyle(el).borderTopStyle,
      );
      expect(line).toBe("dashed");
      await boundary.evaluate((el) =>
        (el as unknown as { scrollIntoView(options: object): void }).scrollIntoView({
          block: "center",
        }),
      );
      await screenshot(page, "timeline-fork");
    });

    it("shows a tool call beside its result, arguments and output pretty-printed", async () => {
      await page.goto(at(viewer, `/s/${enc(TOOL_SESSION)}`));
      const pair = page.getByTestId("tool-pair").first();
      await pair.waitFor();
      const call = pair.getByTestId("tool-call");
      const result = pair.getByTestId("tool-result");
      expect(await call.locator(".who").textContent()).toContain("tool call");
      expect((await result.locator("pre").first().textContent())?.length).toBeGreaterThan(0);
      const a = await call.boundingBox();
      const b = await result.boundingBox();
      expect(a && b).toBeTruthy();
      // Beside: the same row, the result to the right of the call.
      expect(Math.abs((a?.y ?? 0) - (b?.y ?? 1))).toBeLessThan(2);
      expect(b?.x ?? 0).toBeGreaterThan((a?.x ?? 0) + (a?.width ?? 0) - 1);
      const args = await call.locator("pre").first().textContent();
      expect(args).toMatch(/^\{\n {2}"/);
      await pair.scrollIntoViewIfNeeded();
      await screenshot(page, "timeline");
    });

    it("folds long tool output, collapses reasoning, fetches a step's raw chunks, marks a cancelled turn", async () => {
      await page.goto(at(viewer, `/s/${TOOLS}`));
      const result = page.getByTestId("tool-result").first();
      await result.waitFor();
      const head = await result.locator("pre").first().textContent();
      expect(head?.split("\n")).toHaveLength(12);
      const fold = result.locator("details.fold");
      expect(await fold.locator("summary").textContent()).toBe("28 more lines");
      expect(await fold.locator("pre").isVisible()).toBe(false);
      await fold.locator("summary").click();
      expect(await fold.locator("pre").textContent()).toContain("line 40");
      expect(await page.getByTestId("tool-call").first().locator("pre").textContent()).toBe(
        '{\n  "path": "/work",\n  "all": true\n}',
      );
      // The second turn was cancelled: its header says so.
      const second = page.locator('[data-testid="turn"][data-turn="2"]');
      expect(await second.getByTestId("turn-mark").textContent()).toBe("cancelled");
      // A step's chunks, assembled, with the raw events one click away.
      const step = page.getByTestId("assistant").first();
      expect(await step.locator(".md").textContent()).toContain("Listing.");
      await step.getByTestId("raw-toggle").click();
      const raw = step.getByTestId("raw-chunks");
      await raw.locator("pre").first().waitFor();
      const events = (await raw.locator("pre").allTextContents()).map(
        (text) => JSON.parse(text) as { type: string },
      );
      expect(events.length).toBeGreaterThan(1);
      for (const event of events) expect(event.type).toBe("assistant/chunk");
      // Reasoning starts collapsed (the corpus's steps carry reasoning).
      await page.goto(at(viewer, `/s/${enc(TOOL_SESSION)}`));
      const reasoning = page.getByTestId("reasoning").first();
      await reasoning.waitFor();
      expect(await reasoning.getAttribute("open")).toBeNull();
      expect(await reasoning.locator("pre").isVisible()).toBe(false);
    });

    it("compares the fork with its parent from the boundary on", async () => {
      await page.goto(at(viewer, `/s/${enc(FORK_CHILD)}/compare`));
      const parent = page.getByTestId("compare-parent");
      const child = page.getByTestId("compare-child");
      await parent.locator(".row").first().waitFor();
      await child.locator(".row").first().waitFor();
      expect(await parent.textContent()).toContain("subagent_fork");
      expect(await child.textContent()).toContain("What is the project codeword");
      expect(await child.textContent()).not.toContain("Use the subagent_fork tool");
      const seqs = await page
        .locator('[data-testid="compare"] .row')
        .evaluateAll((els) => els.map((el) => Number(el.getAttribute("data-seq"))));
      for (const seq of seqs) expect(seq).toBeGreaterThanOrEqual(38);
      await screenshot(page, "compare");
    });

    it("shows a fork child's replay script: its one own entry", async () => {
      await page.goto(at(viewer, `/s/${enc(FORK_CHILD)}/replay`));
      await page.getByTestId("replay").waitFor();
      const entries = page.getByTestId("replay-entry");
      expect(await entries.count()).toBe(1);
      expect(await entries.first().getAttribute("data-kind")).toBe("chunks");
      expect(await entries.first().textContent()).toContain("MARMALADE");
      await screenshot(page, "replay");
      // A cancelled turn's unfinished step replays as a hang.
      await page.goto(at(viewer, `/s/${TOOLS}/replay`));
      await page.getByTestId("replay").waitFor();
      const kinds = await page
        .getByTestId("replay-entry")
        .evaluateAll((els) => els.map((el) => el.getAttribute("data-kind")));
      expect(kinds).toEqual(["chunks", "hang"]);
      expect(await page.getByTestId("replay-entry").last().textContent()).toContain(
        "hangs until the caller cancels",
      );
    });

    it("appends what a second process writes, in place, without reloading", async () => {
      await page.goto(at(viewer, `/s/${enc(LIVE)}`));
      await page.locator('[data-testid="live-status"][data-state="watching"]').waitFor();
      await page.evaluate(() => {
        (globalThis as unknown as PageGlobals).__sameDocument = true;
      });
      expect(await page.getByTestId("turn").count()).toBe(1);
      appendFromAnotherProcess(store, LIVE, userTurn(2, "LIVE-UPDATE-MARKER from another process"));
      await page.getByText("LIVE-UPDATE-MARKER from another process").waitFor();
      expect(await page.getByTestId("turn").count()).toBe(2);
      const same = await page.evaluate(() => (globalThis as unknown as PageGlobals).__sameDocument);
      expect(same).toBe(true);
    });

    it("shows <script> and <img onerror> from a log as text; nothing runs", async () => {
      // Seen failing with markdown-it's html option turned on: the message text lost its tags
      // (the browser parsed them) and an <img> appeared; the page's CSP alone hid the rest.
      await page.goto(at(viewer, `/s/${enc(HOSTILE)}`));
      const message = page.locator(".msg.role-user").first();
      await message.waitFor();
      expect(await message.textContent()).toContain(HOSTILE_TEXT.replace("look: ", ""));
      expect(await page.locator("#app script").count()).toBe(0);
      expect(await page.locator("#app img").count()).toBe(0);
      const pwned = await page.evaluate(
        () => (globalThis as unknown as PageGlobals).__seedlinePwned,
      );
      expect(pwned).toBeUndefined();
      // The title in the list is text too.
      await page.goto(at(viewer, "/?prefix=viewer-hostile"));
      await page.locator(`[data-testid="session-row"][data-id="${HOSTILE}"]`).waitFor();
      expect(await page.locator("#app img").count()).toBe(0);
      expect(pageErrors).toEqual([]);
    });

    it("opens deep links to an event and to a turn at their place", async () => {
      // Seen failing (no lit row) while a tool call's row covered only the call's own seq: a
      // link to its result's event lit nothing.
      const tool = await fetch(
        at(viewer, `/api/sessions/${enc(TOOL_SESSION)}/events?fromSeq=0&limit=2000`),
        {
          headers: { authorization: `Bearer ${viewer.token}` },
        },
      );
      const { events } = (await tool.json()) as { events: { seq: number; type: string }[] };
      const result = events.find((e) => e.type === "tool/result");
      expect(result).toBeDefined();
      const seq = result?.seq as number;
      await page.goto(at(viewer, `/s/${enc(TOOL_SESSION)}/e/${seq}`));
      const lit = page.locator(".timeline .highlight");
      await lit.waitFor();
      expect(await lit.count()).toBe(1);
      const [first, last] = await lit.evaluate((el) => [
        Number(el.getAttribute("data-seq")),
        Number(el.getAttribute("data-last")),
      ]);
      expect(first).toBeLessThanOrEqual(seq);
      expect(last).toBeGreaterThanOrEqual(seq);
      expect(await lit.isVisible()).toBe(true);
      await page.goto(at(viewer, `/s/${enc(MULTI_TURN)}/t/2`));
      const turn = page.locator('.timeline .highlight[data-testid="turn"]');
      await turn.waitFor();
      expect(await turn.getAttribute("data-turn")).toBe("2");
      // A link to a session the store does not hold says so, with the API's code.
      await page.goto(at(viewer, "/s/no-such-session"));
      const error = page.getByTestId("error").first();
      await error.waitFor();
      expect(await error.textContent()).toContain("SESSION_NOT_FOUND");
    });

    it("loads one page on open and the next as the reader scrolls, never the whole log", async () => {
      const asked: string[] = [];
      const onRequest = (request: { url(): string }) => {
        const url = new URL(request.url());
        if (url.pathname.endsWith("/timeline")) asked.push(url.search);
      };
      page.on("request", onRequest);
      try {
        await page.goto(at(viewer, `/s/${LONG}`));
        await page.getByTestId("turn").first().waitFor();
        expect(asked).toEqual(["?fromSeq=0&limit=500"]);
        const firstPage = await page.getByTestId("turn").count();
        expect(firstPage).toBeLessThan(LONG_TURNS);
        await page.evaluate(() => {
          const g = globalThis as unknown as PageGlobals;
          g.scrollTo(0, g.document.body.scrollHeight);
        });
        // The next page is there once a turn past the first page's is drawn.
        await page.getByTestId("turn").nth(firstPage).waitFor({ state: "attached" });
        expect(asked[1]).toMatch(/^\?fromSeq=\d+&limit=500$/);
        const turns = await page
          .getByTestId("turn")
          .evaluateAll((els) => els.map((el) => Number(el.getAttribute("data-turn"))));
        // The pages join without a gap or a repeat.
        expect(turns).toEqual(turns.map((_, i) => i + 1));
      } finally {
        page.off("request", onRequest);
      }
    });

    it("opens a deep link in the middle at its page and loads earlier pages scrolling up", async () => {
      const asked: string[] = [];
      const onRequest = (request: { url(): string }) => {
        const url = new URL(request.url());
        if (url.pathname.endsWith("/timeline")) asked.push(url.search);
      };
      page.on("request", onRequest);
      try {
        // Seq 1201 is turn 401's user message (three events a turn).
        await page.goto(at(viewer, `/s/${LONG}/e/1201`));
        const lit = page.locator(".timeline .highlight");
        await lit.waitFor();
        expect(await lit.textContent()).toContain("message 401");
        expect(asked).toEqual(["?fromSeq=1000&limit=500"]);
        await page.getByTestId("load-earlier").scrollIntoViewIfNeeded();
        await page.locator('[data-testid="turn"][data-turn="300"]').waitFor({ state: "attached" });
        expect(asked[1]).toBe("?fromSeq=500&limit=500");
        const turns = await page
          .getByTestId("turn")
          .evaluateAll((els) => els.map((el) => Number(el.getAttribute("data-turn"))));
        const first = turns[0] as number;
        expect(turns).toEqual(turns.map((_, i) => first + i));
      } finally {
        page.off("request", onRequest);
      }
    });

    it("joins a step longer than a page into one assembled message, and links into it", async () => {
      await page.goto(at(viewer, `/s/${LONG_STEP}`));
      // The pages load as the sentinel comes into view; the step is whole once its finish is read.
      const step = page.getByTestId("assistant");
      await page.locator('[data-testid="live-status"]').waitFor();
      expect(await step.count()).toBe(1);
      const text = (await step.locator(".md").textContent()) ?? "";
      expect(text.startsWith("w1 w2 w3 ")).toBe(true);
      expect(text.trim().endsWith(`w${LONG_STEP_CHUNKS}`)).toBe(true);
      expect(text.trim().split(" ")).toHaveLength(LONG_STEP_CHUNKS);
      // A chunk of the second page: its row is the whole step.
      await page.goto(at(viewer, `/s/${LONG_STEP}/e/650`));
      const lit = page.locator(".timeline .highlight");
      await lit.waitFor();
      expect(await lit.getAttribute("data-kind")).toBe("assistant");
      expect(Number(await lit.getAttribute("data-seq"))).toBeLessThanOrEqual(650);
      expect(Number(await lit.getAttribute("data-last"))).toBeGreaterThanOrEqual(650);
    });

    it("opens an HTML export offline: the session drawn from its embedded data, nothing fetched", async () => {
      const run = seedline(["export", FORK_CHILD, "--format", "html", "--store", store]);
      expect(run.status).toBe(0);
      const file = join(temp, "fork.html");
      writeFileSync(file, run.stdout);
      const offline = await browser.newContext({ viewport: { width: 1280, height: 860 } });
      try {
        const exported = await offline.newPage();
        const requests: string[] = [];
        exported.on("request", (request) => requests.push(request.url()));
        const errors: string[] = [];
        exported.on("pageerror", (error) => errors.push(String(error)));
        await exported.goto(pathToFileURL(file).href);
        await exported.getByTestId("seed-boundary").waitFor();
        expect(await exported.getByTestId("session-title").textContent()).toContain("MARMALADE");
        // Compare needs the parent's log: an export has no compare tab.
        expect(await exported.getByTestId("tab-compare").count()).toBe(0);
        await exported.getByTestId("tab-replay").click();
        expect(await exported.getByTestId("replay-entry").count()).toBe(1);
        await exported.getByTestId("tab-lineage").click();
        expect(await exported.getByTestId("lineage-node").count()).toBe(2);
        expect(requests.filter((url) => !url.startsWith("file:"))).toEqual([]);
        expect(errors).toEqual([]);
      } finally {
        await offline.close();
      }
    });

    it("opens the demo's store as the README says: the fork's timeline at its seed boundary", async () => {
      const demo = seedline(["demo", "--keep"], { env: { NO_COLOR: "1" } });
      expect(demo.status).toBe(0);
      // The README's command reads the store's URL from this line.
      const url = /^kept the store: seedline ls --store (\S+)$/m.exec(demo.stdout)?.[1];
      expect(url).toMatch(/^sqlite:.*sessions\.db$/);
      const demoViewer = await startViewer(url as string);
      const shown = await browser.newContext({ viewport: { width: 1280, height: 860 } });
      try {
        const demoPage = await shown.newPage();
        await demoPage.goto(demoViewer.url);
        const fork = demoPage
          .locator('[data-testid="session-row"]:has([data-testid="fork-mark"])')
          .first();
        await fork.waitFor();
        const forkId = await fork.getAttribute("data-id");
        await demoPage.goto(at(demoViewer, `/s/${enc(forkId as string)}`));
        await demoPage.getByTestId("seed-boundary").waitFor();
        expect(await demoPage.getByTestId("tool-pair").count()).toBeGreaterThan(0);
        await screenshot(demoPage, "demo-fork-timeline");
      } finally {
        await shown.close();
        await demoViewer.stop();
        rmSync(dirname((url as string).slice("sqlite:".length)), { recursive: true, force: true });
      }
    });

    it("moves between turns with j/k, focuses search with /, goes back with Esc", async () => {
      await page.goto(at(viewer, `/s/${enc(MULTI_TURN)}`));
      await page.getByTestId("turn").first().waitFor();
      const current = () => page.locator(".kbd-current").getAttribute("data-turn");
      await page.keyboard.press("j");
      expect(await current()).toBe("1");
      await page.keyboard.press("j");
      expect(await current()).toBe("2");
      await page.keyboard.press("k");
      expect(await current()).toBe("1");
      await page.keyboard.press("/");
      expect(
        await page.evaluate(
          () => (globalThis as unknown as PageGlobals).document.activeElement?.id,
        ),
      ).toBe("search");
      await page.keyboard.press("Escape");
      expect(
        await page.evaluate(
          () => (globalThis as unknown as PageGlobals).document.activeElement?.id,
        ),
      ).not.toBe("search");
      await page.keyboard.press("Escape");
      await page.getByTestId("sessions-view").waitFor();
      expect(new URL(page.url()).pathname).toBe("/");
    });
  },
);
