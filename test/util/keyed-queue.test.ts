import { describe, expect, it } from "vitest";
import { KeyedQueue } from "../../src/util/keyed-queue.js";

const tick = () => new Promise((r) => setTimeout(r, 5));

describe("KeyedQueue", () => {
  it("runs the tasks of one key in call order, and of different keys concurrently", async () => {
    const queue = new KeyedQueue();
    const log: string[] = [];
    const task = (name: string) => async () => {
      log.push(`start ${name}`);
      await tick();
      log.push(`end ${name}`);
    };
    await Promise.all([
      queue.run("a", task("a1")),
      queue.run("a", task("a2")),
      queue.run("b", task("b1")),
    ]);
    expect(log.indexOf("end a1")).toBeLessThan(log.indexOf("start a2"));
    expect(log.indexOf("start b1")).toBeLessThan(log.indexOf("end a1"));
    expect(queue.size).toBe(0);
  });

  it("goes on after a failed task and hands each caller its own result", async () => {
    const queue = new KeyedQueue();
    const failed = queue.run("a", async () => {
      throw new Error("boom");
    });
    const next = queue.run("a", async () => 42);
    await expect(failed).rejects.toThrow("boom");
    await expect(next).resolves.toBe(42);
  });

  it("runs one key's tasks in order, even after a failure, and other keys at once", async () => {
    const queue = new KeyedQueue();
    const events: string[] = [];
    let release: () => void = () => {};
    const first = queue.run("a", async () => {
      await new Promise<void>((resolve) => {
        release = resolve;
      });
      events.push("a1");
      throw new Error("a1 failed");
    });
    const second = queue.run("a", async () => {
      events.push("a2");
    });
    await queue.run("b", async () => {
      events.push("b1");
    });
    await queue.run(undefined, async () => {
      events.push("free");
    });
    expect(queue.isIdle("a")).toBe(false);
    expect(queue.isIdle("b")).toBe(true);
    release();
    await expect(first).rejects.toThrow("a1 failed");
    await second;
    expect(events).toEqual(["b1", "free", "a1", "a2"]);
    expect(queue.isIdle("a")).toBe(true);
  });
});
