// The PostgreSQL backend keeps the SessionBackend contract of seedline/testing, one fresh schema per case.
import { describe, it } from "vitest";
import { defineBackendContract } from "../../src/testing/index.js";
import { corpusLogs } from "../helpers/corpus.js";
import { describePostgres, makePostgresHarness } from "../helpers/postgres-harness.js";

describePostgres("PostgreSQL backend", () => {
  defineBackendContract(
    { describe, it },
    {
      name: "postgres",
      harness: makePostgresHarness,
      corpus: corpusLogs(),
    },
  );
});
