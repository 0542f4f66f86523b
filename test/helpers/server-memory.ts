// The memory of a spawned server as Linux tells it: its peak resident set (VmHWM), read from /proc by pid.
import { readFileSync } from "node:fs";

/** The peak resident set of process `pid` so far, in bytes (VmHWM of /proc/PID/status). */
export function peakRss(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kib = /^VmHWM:\s+(\d+)\s+kB$/m.exec(status)?.[1];
  if (kib === undefined) throw new Error(`expected VmHWM in /proc/${pid}/status, got ${status}`);
  return Number(kib) * 1024;
}

/** Whether /proc tells a process's peak resident set here (Linux). */
export function peakRssKnown(): boolean {
  try {
    peakRss(process.pid);
    return true;
  } catch {
    return false;
  }
}
