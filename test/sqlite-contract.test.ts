// The SQLite backend joins the persistence contract, one fresh database file per case.
import { runPersistenceContract } from "./contract/persistence-contract.js";
import { makeSqliteHarness } from "./sqlite-harness.js";

runPersistenceContract("sqlite", makeSqliteHarness);
