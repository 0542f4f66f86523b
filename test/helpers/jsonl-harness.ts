// A JSONL backend over a fresh temporary folder, with tamper hooks that edit its log files in place.
import { createHash } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { JsonlBackend } from "../../src/store/jsonl/jsonl-backend.js";
import { logFileName } from "../../src/store/jsonl/layout.js";
import type { ContractHarness, ContractTamper } from "../../src/testing/index.js";

/** A harness for the backend contract: every `open()` is a new instance over the same folder. */
export async function makeJsonlHarness(): Promise<
  ContractHarness & { readonly tamper: ContractTamper }
> {
  const root = mkdtempSync(join(tmpdir(), "seedline-jsonl-contract-"));
  const file = (id: string) => join(root, "sessions", logFileName(id));
  const lines = (id: string) => readFileSync(file(id), "utf8").split("\n");
  const rewrite = (id: string, n: number, edit: (line: string) => string) => {
    const all = lines(id);
    all[n] = edit(all[n] as string);
    writeFileSync(file(id), all.join("\n"));
  };
  const setKey = (key: string, value: unknown) => (line: string) =>
    JSON.stringify({ ...JSON.parse(line), [key]: value });
  return {
    open: async () => new JsonlBackend(root),
    tamper: {
      setFormatVersion: async (id, version) => rewrite(id, 0, setKey("version", version)),
      tearTail: async (id) => writeFileSync(file(id), '{"type":"turn/sta', { flag: "a" }),
      garble: async (id, seq) => rewrite(id, seq + 1, (line) => `#${line.slice(1)}`),
      setType: async (id, seq, type) => rewrite(id, seq + 1, setKey("type", type)),
      fingerprint: async () => {
        const hash = createHash("sha256");
        const files = readdirSync(root, { recursive: true, withFileTypes: true })
          .filter((entry) => entry.isFile())
          .map((entry) => join(entry.parentPath, entry.name))
          .sort();
        for (const path of files) hash.update(`${path}\n`).update(readFileSync(path));
        return hash.digest("hex");
      },
    },
    cleanup: async () => rmSync(root, { recursive: true, force: true }),
  };
}
