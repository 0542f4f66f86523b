// The viewer in headless Chromium draws an imported Claude Code session: its prompts, answers, reasoning, tool calls beside their results, the foreign records folded, and a rewound branch as a fork.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCliHere } from "../helpers/cli-in-process.js";
import {
  CLAUDE_CODE_FIXTURES,
  HAVE_CLAUDE_CODE_FIXTURES,
} from "../helpers/import-claude-code-harness.js";
import {
  browserUnavailable,
  launchBrowser,
  screenshot,
  startViewer,
  type Viewer,
} from "../helpers/viewer-browser-harness.js";

const unavailable = browserUnavailable();
const skipped =
  unavailable ?? (HAVE_CLAUDE_CODE_FIXTURES ? undefined : `${CLAUDE_CODE_FIXTURES} is absent`);

const SESSION = "claude-code-b3edadab-bca0-4054-9b41-f7ffa6941260";

describe.skipIf(skipped !== undefined)(
  `an imported Claude Code session in the viewer, headless Chromium${skipped === undefined ? "" : ` (skipped: ${skipped})`}`,
  () => {
    let temp: string;
    let viewer: Viewer;
    let browser: Browser;
    let page: Page;

    beforeAll(async () => {
      temp = mkdtempSync(join(tmpdir(), "seedline-viewer-import-"));
      const store = `sqlite:${join(temp, "store.db")}`;
      const folder = join(CLAUDE_CODE_FIXTURES, "kfischer");
      const imported = await runCliHere([
        "import",
        "--from",
        "claude-code",
        folder,
        "--store",
        store,
      ]);
      expect(imported.status, imported.stderr).toBe(0);
      viewer = await startViewer(store);
      browser = await launchBrowser();
      page = await (await browser.newContext({ viewport: { width: 1280, height: 860 } })).newPage();
      await page.goto(viewer.url);
      await page.getByTestId("session-row").first().waitFor();
    });

    afterAll(async () => {
      await browser?.close();
      await viewer?.stop();
      if (temp !== undefined) rmSync(temp, { recursive: true, force: true });
    });

    it("draws its prompts, answers, reasoning and tool calls beside their results", async () => {
      await page.goto(`${viewer.origin}/s/${SESSION}`);
      await page.getByTestId("live-status").waitFor();
      const timeline = (await page.locator("main").textContent()) ?? "";
      expect(timeline).toContain("Hello I want to have some test conversation with you");
      expect(timeline).toContain("Done! I've created");
      // One assistant item per line Claude Code wrote: the answer after the reasoning is drawn too.
      expect(await page.getByTestId("reasoning").count()).toBe(9);
      const pairs = await page
        .getByTestId("tool-pair")
        .evaluateAll((rows) =>
          rows.map(
            (row) => row.querySelector('[data-testid="tool-call"] .who b')?.textContent ?? "",
          ),
        );
      expect(pairs).toEqual(["Write", "Read", "Edit", "Task", "Edit"]);
      await screenshot(page, "claude-code-import");
    });

    it("folds each foreign record, its JSON one click away", async () => {
      await page.goto(`${viewer.origin}/s/${SESSION}`);
      await page.getByTestId("live-status").waitFor();
      const foreign = page.getByTestId("foreign");
      // The main line's six file-history snapshots, and its first line (its working directory,
      // git branch and Claude Code version).
      expect(await foreign.count()).toBe(7);
      const first = foreign.first();
      expect(await first.locator("summary").textContent()).toContain("claude-code line 1");
      expect(await first.locator("summary").textContent()).toContain("file-history-snapshot");
      expect(await first.locator("pre").isVisible()).toBe(false);
      await first.locator("summary").click();
      await first.getByTestId("raw-toggle").click();
      // The raw events come in after the click ("loading…" until then): waited for by their own
      // element, not the panel's (the panel alone failed once with "loading…" read too early).
      const raw = first.getByTestId("raw-chunks");
      await raw.locator("pre").first().waitFor();
      expect(await raw.textContent()).toContain('"type":"foreign/record"');
    });

    it("draws a rewound branch as a fork of the main line, from its seed boundary on", async () => {
      await page.goto(`${viewer.origin}/s/${SESSION}.branch-3`);
      await page.getByTestId("live-status").waitFor();
      await page.getByTestId("seed-boundary").waitFor();
      expect(await page.getByTestId("seed-boundary").textContent()).toContain(
        "49 events inherited",
      );
      // The interrupted turn of this branch is marked as cancelled.
      expect(await page.getByTestId("turn-mark").allTextContents()).toContain("cancelled");
    });
  },
);
