// The replay layer's public surface: deriving, loading and serving recorded model responses.
export { assembleMessage } from "./assemble.js";
export { deriveReplayScript, replayProblems } from "./derive.js";
export { type EnactOptions, enactEntry, RecordedModelError } from "./enact.js";
export {
  FIXTURE_OVERRIDE_FILE,
  FIXTURE_PRIMARY_FILE,
  loadFixtureScripts,
  loadSessionScripts,
  type SessionScriptFiles,
} from "./fixture-scripts.js";
export { ReplayModel, type UnservedScript } from "./replay-model.js";
export {
  parseReplayOverride,
  parseSessionFile,
  parseSessionHeader,
  parseSessionLog,
  type SessionFile,
  type SessionFileHeader,
} from "./session-file.js";
export {
  orderScripts,
  type SessionScriptOptions,
  sessionScript,
} from "./session-script.js";
export {
  type StoredScriptsOptions,
  storedSessionScript,
  storedSessionScripts,
} from "./store-scripts.js";
