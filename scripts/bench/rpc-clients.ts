// B5 and B6's processes: the seedline server and the bare echo server, each spawned with the same typed client.
import { join } from "node:path";
import { SeedlineClient } from "../../src/client/seedline-client.js";
import { entryArgs, REPO_ROOT } from "./runtime.js";

/** A seedline server (`stdio-main`, which `seedline serve` runs too) on `storeUrl`, in this process's build. */
export function spawnSeedline(storeUrl: string): SeedlineClient {
  return SeedlineClient.spawn({
    command: process.execPath,
    args: [...entryArgs(join(REPO_ROOT, "src", "rpc", "stdio-main.ts")), "--store", storeUrl],
    cwd: REPO_ROOT,
    stderr: "inherit",
  });
}

/** The echo server of echo-server.ts, driven by the same client class. */
export function spawnEcho(): SeedlineClient {
  return SeedlineClient.spawn({
    command: process.execPath,
    args: entryArgs(join(REPO_ROOT, "scripts", "bench", "echo-server.ts")),
    cwd: REPO_ROOT,
    stderr: "inherit",
  });
}
