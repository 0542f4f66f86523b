// The JSONL backend keeps the SessionBackend contract of seedline/testing, one fresh folder per case.
import { describe, it } from "vitest";
import { defineBackendContract } from "../src/testing/index.js";
import { corpusLogs } from "./corpus.js";
import { makeJsonlHarness } from "./jsonl-harness.js";

defineBackendContract(
  { describe, it },
  { name: "jsonl", harness: makeJsonlHarness, corpus: corpusLogs() },
);
