// The `seedline/testing` entry: the contract a SessionBackend implementation runs to prove itself.
export { defineBackendContract } from "./backend-contract.js";
export type {
  BackendContractOptions,
  ContractBody,
  ContractCorpusLog,
  ContractHarness,
  ContractLimits,
  ContractTamper,
  TestFunctions,
} from "./types.js";
