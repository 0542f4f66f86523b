// The SQLite backend keeps the SessionBackend contract of seedline/testing, one fresh database per case.
import { describe, it } from "vitest";
import { defineBackendContract } from "../../src/testing/index.js";
import { corpusLogs } from "../helpers/corpus.js";
import { makeSqliteHarness } from "../helpers/sqlite-harness.js";

defineBackendContract(
  { describe, it },
  {
    name: "sqlite",
    harness: makeSqliteHarness,
    corpus: corpusLogs(),
  },
);
