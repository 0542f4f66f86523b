// V1: time to first content opening a 100k-event session in the viewer (seedline ui) in headless Chromium, and the events the server sent to draw it.
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { SessionHeader } from "../../src/index.js";
import { fillOne, SEED, type Sizes } from "./fixtures.js";
import { type Benchmark, fmt, row, tempDir } from "./harness.js";
import { entryArgs, REPO_ROOT } from "./runtime.js";
import { syntheticLog } from "./synthetic-log.js";

/** docs/viewer.md's target for V1: the first screen of a 100,000-event session within a second. */
export const V1_TARGET = { op: "<=", value: 1000 } as const;

/** The events of one timeline page the app asks for (src/viewer/app/timeline.ts, PAGE_EVENTS). */
const PAGE_EVENTS = 500;

/** Debian's Chromium, as the browser tests use it; `SEEDLINE_CHROMIUM` names another binary. */
const CHROMIUM = process.env.SEEDLINE_CHROMIUM ?? "/usr/bin/chromium";

/** What `seedline ui` prints once it listens. */
const LISTENING = /seedline ui: (http:\/\/[^/\s]+)\/\?token=([A-Za-z0-9_-]+)/;

/** Spawns `seedline ui` on `storeUrl` and resolves with its origin and token. */
function startUi(
  storeUrl: string,
): Promise<{ child: ChildProcess; origin: string; token: string }> {
  const entry = entryArgs(join(REPO_ROOT, "src", "cli", "main.ts"));
  const child = spawn(process.execPath, [...entry, "ui", "--store", storeUrl, "--port", "0"], {
    cwd: REPO_ROOT,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  return new Promise((resolve, reject) => {
    const look = (chunk: Buffer) => {
      out += chunk.toString("utf8");
      const match = LISTENING.exec(out);
      if (match !== null) resolve({ child, origin: match[1] as string, token: match[2] as string });
    };
    child.stdout?.on("data", look);
    child.stderr?.on("data", look);
    child.once("exit", (code) => reject(new Error(`V1: seedline ui exited (${code}): ${out}`)));
  });
}

/** The events a viewer API response carried: a timeline page's span, or raw events. */
function eventsIn(path: string, body: unknown): number {
  const b = body as Record<string, unknown>;
  if (/\/timeline$/.test(path)) return (b.nextSeq as number) - (b.fromSeq as number);
  if (/\/events$/.test(path)) return (b.events as unknown[]).length;
  return 0;
}

export function v1ViewerFirstContent(sizes: Sizes): Benchmark {
  return {
    id: "V1",
    title: "viewer: time to first content of a large session in headless Chromium",
    async run(ctx) {
      const what = (events: number) =>
        `viewer first content, ${events}-event session (sqlite), headless Chromium`;
      if (!existsSync(CHROMIUM)) {
        ctx.skip(
          "V1",
          what(sizes.logEvents),
          `no Chromium at ${CHROMIUM} (install the distribution's chromium)`,
        );
        return [];
      }
      const { chromium } = await import("playwright-core");
      const log = syntheticLog(SEED, sizes.logEvents, "v1");
      const header: SessionHeader = log.header;
      const temp = tempDir("v1");
      let ui: Awaited<ReturnType<typeof startUi>> | undefined;
      const browser = await chromium.launch({
        executablePath: CHROMIUM,
        headless: true,
        args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
      });
      try {
        fillOne("sqlite", temp.dir, header, log.events);
        ctx.progress(`V1: ${log.events.length} events written; starting seedline ui`);
        ui = await startUi(`sqlite:${join(temp.dir, "store.db")}`);
        const url = `${ui.origin}/s/${encodeURIComponent(header.id)}?token=${ui.token}`;
        const subject: number[] = [];
        const floor: number[] = [];
        let mostEvents = 0;
        let items = 0;
        // One warm-up round (the server's first read opens the store), then the measured rounds.
        for (let round = -1; round < ctx.rounds; round++) {
          const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
          const page = await context.newPage();
          let sent = 0;
          let drawn = false;
          const counting: Promise<void>[] = [];
          page.on("response", (response) => {
            const path = new URL(response.url()).pathname;
            if (!path.startsWith("/api/") || drawn) return;
            counting.push(
              response.json().then(
                (body) => {
                  sent += eventsIn(path, body);
                },
                () => {},
              ),
            );
          });
          const start = performance.now();
          await page.goto(url, { waitUntil: "commit" });
          await page.locator('[data-testid="timeline"] .row').first().waitFor();
          const ms = performance.now() - start;
          drawn = true;
          await Promise.all(counting);
          items = await page.locator('[data-testid="timeline"] .row').count();
          await context.close();
          if (sent > PAGE_EVENTS) {
            throw new Error(
              `V1: expected at most one page (${PAGE_EVENTS} events) sent to draw the first screen, got ${sent}`,
            );
          }
          if (round < 0) continue;
          mostEvents = Math.max(mostEvents, sent);
          subject.push(ms);
          // Context: the timeline page's own request, straight from Node.
          const apiStart = performance.now();
          const api = await fetch(
            `${ui.origin}/api/sessions/${encodeURIComponent(header.id)}/timeline?fromSeq=0&limit=${PAGE_EVENTS}`,
            { headers: { authorization: `Bearer ${ui.token}` } },
          );
          await api.json();
          floor.push(performance.now() - apiStart);
        }
        ctx.progress(`V1: first content in ${subject.map((s) => fmt(s)).join(", ")} ms`);
        return [
          row({
            id: "V1",
            what: what(log.events.length),
            floor: "context: the first timeline page fetched from Node (no browser)",
            unit: "ms",
            ratioOf: "absolute",
            subject,
            baseline: floor,
            target: V1_TARGET,
            facts: {
              store: "sqlite",
              events: log.events.length,
              pageEvents: PAGE_EVENTS,
              mostEventsSentBeforeFirstContent: mostEvents,
              rowsDrawn: items,
              browser: "headless Chromium (distribution package) via playwright-core",
            },
          }),
        ];
      } finally {
        await browser.close();
        ui?.child.kill("SIGTERM");
        temp.remove();
      }
    },
  };
}
