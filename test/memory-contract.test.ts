import { MemoryBackend } from "../src/index.js";
import { runPersistenceContract } from "./contract/persistence-contract.js";

runPersistenceContract(
  "memory",
  async () => {
    const backend = new MemoryBackend();
    return { open: async () => backend, cleanup: async () => {} };
  },
  {
    noTamper: "the memory backend keeps no stored form to damage",
    oneWriter: "one process owns the memory, so every instance is the same writer",
  },
);
