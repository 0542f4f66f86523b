// M2 and M3's meter: a process's resident set (now and at its peak) from Linux's /proc/PID/status.
import { existsSync, readFileSync } from "node:fs";

/** One reading of a process's memory, in bytes. */
export interface ProcMemory {
  /** VmRSS: resident now. */
  readonly rss: number;
  /** VmHWM: the most it has been resident since it started. */
  readonly hwm: number;
}

/** Why a process's memory cannot be read here, or undefined when it can (Linux /proc). */
export function procMemoryUnavailable(): string | undefined {
  return existsSync(`/proc/${process.pid}/status`)
    ? undefined
    : "no /proc/PID/status to read a process's VmRSS and VmHWM from (Linux only)";
}

/** The value of a `Name:   123 kB` line of /proc/PID/status, in bytes. */
function field(status: string, name: string, pid: number): number {
  const match = new RegExp(`^${name}:\\s*(\\d+) kB$`, "m").exec(status);
  if (match === null) {
    throw new Error(`expected a "${name}: N kB" line in /proc/${pid}/status, found none`);
  }
  return Number(match[1]) * 1024;
}

/**
 * `pid`'s VmRSS and VmHWM now.
 * @throws Error when the process is gone or its status has no such lines.
 */
export function procMemory(pid: number): ProcMemory {
  let status: string;
  try {
    status = readFileSync(`/proc/${pid}/status`, "utf8");
  } catch (error) {
    throw new Error(
      `expected process ${pid} to be running to read its memory, but /proc/${pid}/status could not be read: ${(error as Error).message}`,
    );
  }
  return { rss: field(status, "VmRSS", pid), hwm: field(status, "VmHWM", pid) };
}

/**
 * Reads `pid`'s memory every `everyMs` until stopped; `stop` reads it once more (when the process
 * is still there) and returns the greatest VmRSS and VmHWM seen. Never throws once started: a
 * process that ends leaves its last reading.
 * @throws Error when the first reading fails (see {@link procMemory}).
 */
export function sampleMemory(pid: number, everyMs = 20): { stop(): ProcMemory } {
  let rss = 0;
  let hwm = 0;
  const read = () => {
    try {
      const now = procMemory(pid);
      rss = Math.max(rss, now.rss);
      hwm = Math.max(hwm, now.hwm);
    } catch {
      // The process ended between two readings: the last reading stands.
    }
  };
  const first = procMemory(pid);
  rss = first.rss;
  hwm = first.hwm;
  const timer = setInterval(read, everyMs);
  return {
    stop: () => {
      clearInterval(timer);
      read();
      return { rss, hwm };
    },
  };
}
