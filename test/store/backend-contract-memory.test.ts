// The memory backend keeps the SessionBackend contract of seedline/testing.
import { describe, it } from "vitest";
import { MemoryBackend } from "../../src/index.js";
import { defineBackendContract } from "../../src/testing/index.js";
import { corpusLogs } from "../helpers/corpus.js";

defineBackendContract(
  { describe, it },
  {
    name: "memory",
    harness: async () => {
      const backend = new MemoryBackend();
      return { open: async () => backend, cleanup: async () => {} };
    },
    limits: {
      noTamper: "the memory backend keeps no stored form to damage",
      oneWriter: "one process owns the memory, so every instance is the same writer",
    },
    corpus: corpusLogs(),
  },
);
