// The viewer against other servers on 127.0.0.1, in headless Chromium: a page of another port cannot fork through it, and never receives its token.
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  appendFromAnotherProcess,
  browserUnavailable,
  launchBrowser,
  startViewer,
  userTurn,
  type Viewer,
} from "../helpers/viewer-browser-harness.js";

const unavailable = browserUnavailable();

/** What the tests read of a page's globals (the tests are typechecked without the DOM lib). */
interface PageGlobals {
  document: { title: string };
}
const SESSION = "origin-target";

/** A request another local server received: its path and the Cookie header the browser sent. */
interface Seen {
  readonly path: string;
  readonly cookie: string | undefined;
}

/**
 * Another local server, on another port of 127.0.0.1 (another origin, the same site): it records
 * what the browser sends it, and its page `/attack` asks the browser to POST to `target` with a
 * no-cors fetch with credentials (which needs no permission from the target: the browser sends
 * it, cookies and all, and only hides the answer), then titles itself "sent".
 */
async function otherLocalServer(
  target: string,
): Promise<{ server: Server; origin: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const page = `<!doctype html><title>waiting</title><script>
    fetch(${JSON.stringify(target)}, { method: "POST", mode: "no-cors", credentials: "include", body: "{}" })
      .finally(() => { document.title = "sent"; });
  </script>`;
  const server = createServer((req, res) => {
    seen.push({ path: req.url ?? "", cookie: req.headers.cookie });
    res.writeHead(200, { "Content-Type": "text/html; charset=utf-8" });
    res.end(req.url === "/attack" ? page : "<!doctype html><title>other</title>");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { server, origin: `http://127.0.0.1:${port}`, seen };
}

/** The ids of the store's sessions, through the viewer's API. */
async function sessionIds(viewer: Viewer): Promise<string[]> {
  const res = await fetch(`${viewer.origin}/api/sessions?limit=100`, {
    headers: { authorization: `Bearer ${viewer.token}` },
  });
  const body = (await res.json()) as { sessions: { sessionId: string }[] };
  return body.sessions.map((s) => s.sessionId).sort();
}

describe.skipIf(unavailable !== undefined)(
  `seedline ui --allow-write and other local origins, in headless Chromium${unavailable === undefined ? "" : ` (skipped: ${unavailable})`}`,
  () => {
    let temp: string;
    let viewer: Viewer;
    let browser: Browser;
    let context: BrowserContext;
    let page: Page;
    let other: Awaited<ReturnType<typeof otherLocalServer>>;

    beforeAll(async () => {
      temp = mkdtempSync(join(tmpdir(), "seedline-viewer-origin-"));
      const store = `sqlite:${join(temp, "store.db")}`;
      appendFromAnotherProcess(store, SESSION, userTurn(1, "fork me if you can"), true);
      viewer = await startViewer(store, ["--allow-write"]);
      other = await otherLocalServer(`${viewer.origin}/api/sessions/${SESSION}/fork`);
      browser = await launchBrowser();
      context = await browser.newContext();
      page = await context.newPage();
      // The user opens the viewer as it printed itself, and it draws the sessions.
      await page.goto(viewer.url);
      await page.getByTestId("session-row").first().waitFor();
    });

    afterAll(async () => {
      await browser?.close();
      await new Promise<void>((resolve) =>
        other?.server ? other.server.close(() => resolve()) : resolve(),
      );
      await viewer?.stop();
      if (temp !== undefined) rmSync(temp, { recursive: true, force: true });
    });

    it("does not fork for a page of another 127.0.0.1 port that POSTs to the fork route", async () => {
      // Fails without the fix: the SameSite=Strict cookie went along (another port is the same
      // site), so the no-cors POST forked: a second session appeared beside origin-target.
      const before = await sessionIds(viewer);
      expect(before).toEqual([SESSION]);
      await page.goto(`${other.origin}/attack`);
      await page.waitForFunction(
        () => (globalThis as unknown as PageGlobals).document.title === "sent",
      );
      expect(await sessionIds(viewer)).toEqual(before);
    });

    it("never sends the viewer's token to another server on 127.0.0.1", async () => {
      // Fails without the fix: the other server received `seedline_token=TOKEN` with every
      // request once the viewer had been opened.
      await page.goto(viewer.url);
      await page.getByTestId("session-row").first().waitFor();
      await page.goto(`${other.origin}/after-viewer`);
      await page.waitForFunction(
        () => (globalThis as unknown as PageGlobals).document.title === "other",
      );
      const paths = other.seen.map((s) => s.path);
      expect(paths).toContain("/after-viewer");
      expect(paths).toContain("/attack");
      for (const { path, cookie } of other.seen) {
        expect(cookie ?? "", path).not.toContain(viewer.token);
        expect(cookie ?? "", path).not.toContain("seedline_token");
      }
      // The viewer still works in this browser: its page kept the token for itself.
      await page.goto(`${viewer.origin}/s/${SESSION}`);
      await page.locator(".error, [data-testid='turn']").first().waitFor();
      expect(await page.locator(".error").count()).toBe(0);
    });
  },
);
