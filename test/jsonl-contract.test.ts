// The JSONL backend joins the persistence contract, one fresh folder per case.
import { runPersistenceContract } from "./contract/persistence-contract.js";
import { makeJsonlHarness } from "./jsonl-harness.js";

runPersistenceContract("jsonl", makeJsonlHarness);
