// The viewer's browser tests' tools: a spawned `seedline ui`, the distribution's headless Chromium, a second writer process, screenshots.
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { type Browser, chromium, type Page } from "playwright-core";
import { MAIN, ROOT } from "./cli-harness.js";

/** Debian's Chromium; `.ci/run` installs it when missing. `SEEDLINE_CHROMIUM` names another binary. */
export const CHROMIUM = process.env.SEEDLINE_CHROMIUM ?? "/usr/bin/chromium";

/** Where the tests write screenshots of the main views (git-ignored; docs/viewer.md names it). */
export const ARTIFACTS = join(ROOT, "test", "artifacts", "viewer");

/**
 * Why the browser tests cannot run here, or undefined when they can. In CI (CI=true) a missing
 * Chromium is a failure, not a skip: `.ci/run` installs it.
 */
export function browserUnavailable(): string | undefined {
  if (existsSync(CHROMIUM)) return undefined;
  const reason = `no Chromium at ${CHROMIUM} (install the distribution's chromium package, or set SEEDLINE_CHROMIUM)`;
  if (process.env.CI === "true") throw new Error(`CI must run the browser tests: ${reason}`);
  return reason;
}

/** Headless Chromium from the distribution, driven by playwright-core (which downloads nothing). */
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
  });
}

/** A running `seedline ui`. */
export interface Viewer {
  readonly child: ChildProcess;
  /** `http://127.0.0.1:PORT` */
  readonly origin: string;
  readonly token: string;
  /** The address it printed, token included. */
  readonly url: string;
  /** What it wrote to stderr so far. */
  stderr(): string;
  stop(): Promise<void>;
}

/** The line `seedline ui` prints once it listens. */
const LISTENING = /seedline ui: (http:\/\/[^/\s]+)\/\?token=([A-Za-z0-9_-]+)/;

/** Spawns the built CLI's `ui` on `storeUrl` (port 0: a free one) and waits for its address. */
export function startViewer(storeUrl: string, extraArgs: readonly string[] = []): Promise<Viewer> {
  const child = spawn(
    process.execPath,
    [MAIN, "ui", "--store", storeUrl, "--port", "0", ...extraArgs],
    {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, NO_COLOR: "1" },
    },
  );
  let out = "";
  let err = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    err += chunk.toString("utf8");
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill();
      reject(
        new Error(
          `expected seedline ui to print its address within 30 s; stdout ${JSON.stringify(out)}, stderr ${JSON.stringify(err)}`,
        ),
      );
    }, 30_000);
    const look = () => {
      const match = LISTENING.exec(out) ?? LISTENING.exec(err);
      if (match === null) return;
      clearTimeout(timer);
      const [, origin, token] = match as unknown as [string, string, string];
      const exited = new Promise<void>((done) => child.once("exit", () => done()));
      resolve({
        child,
        origin,
        token,
        url: `${origin}/?token=${token}`,
        stderr: () => err,
        stop: async () => {
          if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
          await exited;
        },
      });
    };
    child.stdout?.on("data", (chunk: Buffer) => {
      out += chunk.toString("utf8");
      look();
    });
    child.stderr?.on("data", look);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`seedline ui exited (${code}) before printing its address: ${err}`));
    });
  });
}

/** One event of a writer script (seq and time are filled in). */
type Draft = { type: string; data: unknown; surfaceOp?: "append" };

/** A turn of a user message and nothing else: what the writer appends. */
export function userTurn(turn: number, text: string): Draft[] {
  return [
    { type: "turn/start", data: { turn, trigger: { kind: "message", source: { kind: "user" } } } },
    {
      type: "user/message",
      data: { content: [{ type: "text", text }], source: { kind: "user" } },
      surfaceOp: "append",
    },
    { type: "turn/end", data: { turn, reason: { kind: "completed" } } },
  ];
}

/**
 * Appends `events` to session `id` of `storeUrl` from a second process (the built package's
 * SessionStore), creating the session first when `create` is set.
 * @throws Error when the writer process fails.
 */
export function appendFromAnotherProcess(
  storeUrl: string,
  id: string,
  events: readonly Draft[],
  create = false,
): void {
  const entry = pathToFileURL(join(ROOT, "dist", "src", "index.js")).href;
  const script = `
    import { openBackend, SessionStore } from ${JSON.stringify(entry)};
    const [url, id, create] = [process.argv[1], process.argv[2], process.argv[3] === "1"];
    let input = "";
    for await (const chunk of process.stdin) input += chunk;
    const drafts = JSON.parse(input);
    const store = new SessionStore({ backend: await openBackend(url) });
    const session = create ? await store.create({ id, meta: { cwd: "/work/viewer-tests" } }) : await store.openForWriting(id);
    const at = session.nextSeq;
    await session.append(drafts.map((d, i) => ({ ...d, seq: at + i, time: Date.now() })));
    await store.close();
  `;
  const run = spawnSync(
    process.execPath,
    ["--input-type=module", "-e", script, storeUrl, id, create ? "1" : "0"],
    // The events go on stdin: an argument is limited to 128 KiB.
    { cwd: ROOT, encoding: "utf8", input: JSON.stringify(events) },
  );
  if (run.status !== 0) {
    throw new Error(`expected the writer to append to ${id}: ${run.error ?? run.stderr}`);
  }
}

/**
 * Records `ops` (the `session/record` ops: turn_start, step_start, chunks, tool_result, step_end,
 * turn_end) into session `id` of `storeUrl` from a second process through the built package's
 * TurnRecorder, creating the session first.
 * @throws Error when the recorder refuses an op or the process fails.
 */
export function recordFromAnotherProcess(
  storeUrl: string,
  id: string,
  ops: readonly unknown[],
): void {
  const entry = pathToFileURL(join(ROOT, "dist", "src", "index.js")).href;
  const script = `
    import { openBackend, SessionStore, TurnRecorder } from ${JSON.stringify(entry)};
    const [url, id] = [process.argv[1], process.argv[2]];
    let input = "";
    for await (const chunk of process.stdin) input += chunk;
    const store = new SessionStore({ backend: await openBackend(url) });
    await store.create({ id, meta: { cwd: "/work/viewer-tests" } });
    await new TurnRecorder(await store.openForWriting(id)).record(JSON.parse(input));
    await store.close();
  `;
  const run = spawnSync(process.execPath, ["--input-type=module", "-e", script, storeUrl, id], {
    cwd: ROOT,
    encoding: "utf8",
    input: JSON.stringify(ops),
  });
  if (run.status !== 0) {
    throw new Error(`expected the recorder to record into ${id}: ${run.error ?? run.stderr}`);
  }
}

/** Writes a screenshot of `page` as `<name>.png` in {@link ARTIFACTS}. */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(ARTIFACTS, { recursive: true });
  const path = join(ARTIFACTS, `${name}.png`);
  await page.screenshot({ path, fullPage: false });
  return path;
}

/** Whether the built CLI is there (test/global-setup.ts builds it). */
export function builtCli(): boolean {
  return existsSync(MAIN);
}
