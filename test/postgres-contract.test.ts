// The PostgreSQL backend joins the persistence contract, one fresh schema per case, tampered with in raw SQL.
import { runPersistenceContract } from "./contract/persistence-contract.js";
import { describePostgres, makePostgresHarness } from "./postgres-harness.js";

describePostgres("PostgreSQL backend", () => {
  runPersistenceContract("postgres", makePostgresHarness);
});
