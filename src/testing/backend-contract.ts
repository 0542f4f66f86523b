// The backend contract: every SessionBackend method called directly and through a SessionStore, registered with the caller's test functions.
import { catalogPrimitiveCases } from "./cases/catalog-primitives.js";
import { corpusCases } from "./cases/corpus.js";
import { createAppendCases } from "./cases/create-append.js";
import { foreignCases } from "./cases/foreign.js";
import { forkCases } from "./cases/fork.js";
import { listCases } from "./cases/list.js";
import { loadCases } from "./cases/load.js";
import { loadPageCases } from "./cases/load-pages.js";
import { lockCases } from "./cases/locks.js";
import { repairCases } from "./cases/repair.js";
import { searchCases } from "./cases/search.js";
import { storeLogCases } from "./cases/store-logs.js";
import { storeReaderCases } from "./cases/store-readers.js";
import { storeRefusalCases } from "./cases/store-refusals.js";
import { subscribeCases } from "./cases/subscribe.js";
import { textParityCases } from "./cases/text-parity.js";
import { titleCases } from "./cases/titles.js";
import { caseRegistry } from "./registry.js";
import type { BackendContractOptions, TestFunctions } from "./types.js";

/**
 * Registers the contract every `SessionBackend` must keep, as one `describe` block of cases, with
 * the caller's test functions (vitest, jest, mocha or node:test) and `node:assert/strict`: cases
 * that call the backend's methods directly, and cases ("a store over the backend …") that use it
 * through a `SessionStore` as an application would. Each case runs on fresh storage from `options.harness()`, closes every instance it opened, then calls
 * the harness's `cleanup`. Cases a backend cannot run (no stored form to damage, one writer) are
 * registered with `it.skip`, the reason from `options.limits` in their titles, as are the cases
 * `options.skip` names (known bugs). A case fails with
 * an `AssertionError` saying what was expected and what was found; errors are matched by `code`.
 *
 * @throws Error when `options.skip` names a title no case has (from the `describe` body, when
 *   the runner collects it).
 *
 * The cases wait up to 10 s for change notifications: give the runner a timeout above that
 * (mocha's and jest's defaults are lower).
 */
export function defineBackendContract(test: TestFunctions, options: BackendContractOptions): void {
  const cases = caseRegistry(test, options);
  test.describe(`SessionBackend contract: ${options.name}`, () => {
    createAppendCases(cases);
    loadCases(cases);
    loadPageCases(cases);
    forkCases(cases);
    repairCases(cases);
    foreignCases(cases);
    listCases(cases);
    searchCases(cases);
    lockCases(cases);
    subscribeCases(cases);
    corpusCases(cases, options.corpus ?? []);
    titleCases(cases, options.corpus ?? []);
    catalogPrimitiveCases(cases);
    textParityCases(cases);
    storeLogCases(cases);
    storeRefusalCases(cases);
    storeReaderCases(cases);
    cases.checkSkips();
  });
}
