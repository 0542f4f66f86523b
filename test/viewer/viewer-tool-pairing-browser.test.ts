// The viewer in headless Chromium draws each tool call beside its own result when every step uses call_1, across page edges too.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCliHere } from "../helpers/cli-in-process.js";
import { ORPHAN_TEXT, type PairingLog, pairingLog } from "../helpers/tool-pairing-log.js";
import {
  browserUnavailable,
  launchBrowser,
  screenshot,
  startViewer,
  type Viewer,
} from "../helpers/viewer-browser-harness.js";

const unavailable = browserUnavailable();

const SHORT = pairingLog("pairing");
/**
 * Turn 2's step streams 497 chunks before its call: with the viewer's pages of 500 events, the
 * page from the step's start (seq 15) ends at its call (seq 514) and its result (515) opens the
 * next page.
 */
const PAGED = pairingLog("pairing-paged", 497);

/** What the page draws of each tool row: the tool, the call's text, the result's text. */
async function drawnPairs(page: Page): Promise<string[][]> {
  return page.getByTestId("tool-pair").evaluateAll((pairs) =>
    pairs.map((pair) => {
      const call = pair.querySelector('[data-testid="tool-call"]');
      const result = pair.querySelector('[data-testid="tool-result"]');
      const name = call?.querySelector(".who b")?.textContent ?? "";
      const callText = call?.querySelector("pre, .muted:not(.who *)")?.textContent ?? "";
      const output = result?.querySelector("pre")?.textContent ?? "";
      return [name, callText, output];
    }),
  );
}

/** Each call beside its own output, then the orphan result alone. */
function expectedPairs(log: PairingLog): string[][] {
  return [
    ...log.calls.map((c) => [c.name, JSON.stringify(JSON.parse(c.arguments), null, 2), c.output]),
    ["?", "(answers no call of its step)", ORPHAN_TEXT],
  ];
}

/** Loads the timeline's pages until the end of the log is drawn. */
async function loadToEnd(page: Page): Promise<void> {
  const status = page.getByTestId("live-status");
  const more = page.getByTestId("load-more");
  while ((await status.count()) === 0) {
    // Read without waiting: the sentinel may go between a count and a read (the last page
    // landing), and a waiting read then waited 30 s for it (seen once, two test files at a time).
    const before = await more.evaluateAll((found) => found[0]?.textContent ?? "");
    await page.evaluate(() => {
      const g = globalThis as unknown as { dispatchEvent(event: Event): boolean };
      g.dispatchEvent(new Event("seedline:more"));
    });
    // The next page has landed once the sentinel names a later seq (or the end is drawn).
    await page.waitForFunction((text) => {
      const g = globalThis as unknown as {
        document: { querySelector(s: string): { textContent: string | null } | null };
      };
      const sentinel = g.document.querySelector('[data-testid="load-more"]');
      return sentinel === null || sentinel.textContent !== text;
    }, before);
  }
}

describe.skipIf(unavailable !== undefined)(
  `tool pairing in the viewer, headless Chromium${unavailable === undefined ? "" : ` (skipped: ${unavailable})`}`,
  () => {
    let temp: string;
    let viewer: Viewer;
    let browser: Browser;
    let page: Page;

    beforeAll(async () => {
      temp = mkdtempSync(join(tmpdir(), "seedline-viewer-pairing-"));
      const store = `sqlite:${join(temp, "store.db")}`;
      for (const log of [SHORT, PAGED]) {
        const file = join(temp, `${log.header.id}.jsonl`);
        writeFileSync(file, log.jsonl);
        const imported = await runCliHere(["import", file, "--store", store]);
        expect(imported.status, imported.stderr).toBe(0);
      }
      viewer = await startViewer(store);
      browser = await launchBrowser();
      page = await (await browser.newContext({ viewport: { width: 1280, height: 860 } })).newPage();
      // The printed address (with its token): the page keeps the token once the viewer accepted
      // it, which the list of sessions shows, for the pages opened after it.
      await page.goto(viewer.url);
      await page.getByTestId("session-row").first().waitFor();
    });

    afterAll(async () => {
      await browser?.close();
      await viewer?.stop();
      if (temp !== undefined) rmSync(temp, { recursive: true, force: true });
    });

    // Fails without the fix: every call_1 was drawn beside the first result named call_1, so turn
    // 2's read_file call showed turn 1's list_files output ("notes.txt\nplan.md") and its own
    // result, like grep's, stood alone: six rows where four are drawn.
    it("draws turn 2's read_file call beside its own output, not turn 1's", async () => {
      await page.goto(`${viewer.origin}/s/${SHORT.header.id}`);
      await page.getByTestId("live-status").waitFor();
      expect(await drawnPairs(page)).toEqual(expectedPairs(SHORT));
      await page.getByTestId("tool-pair").nth(2).scrollIntoViewIfNeeded();
      await screenshot(page, "tool-pairing");
    });

    // Fails without the fix: as above once the pages were joined: read_file's row showed
    // list_files' output and its own result, from the next page, stood alone.
    it("pairs a result with its call on the page before, and never with an earlier step's call", async () => {
      const asked: string[] = [];
      const onRequest = (request: { url(): string }) => {
        const url = new URL(request.url());
        if (url.pathname.endsWith("/timeline")) asked.push(url.searchParams.get("fromSeq") ?? "");
      };
      page.on("request", onRequest);
      try {
        await page.goto(`${viewer.origin}/s/${PAGED.header.id}`);
        await page.getByTestId("turn").first().waitFor();
        await loadToEnd(page);
      } finally {
        page.off("request", onRequest);
      }
      const [, , readFile] = PAGED.calls;
      // The call and its result came in different pages.
      expect(asked).toContain(String(readFile?.resultSeq));
      expect(await drawnPairs(page)).toEqual(expectedPairs(PAGED));
    });
  },
);
