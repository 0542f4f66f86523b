// The JSONL backend keeps the SessionBackend contract of seedline/testing, one fresh folder per case.
import { describe, it } from "vitest";
import { defineBackendContract } from "../../src/testing/index.js";
import { corpusLogs } from "../helpers/corpus.js";
import { makeJsonlHarness } from "../helpers/jsonl-harness.js";

defineBackendContract(
  { describe, it },
  { name: "jsonl", harness: makeJsonlHarness, corpus: corpusLogs() },
);
