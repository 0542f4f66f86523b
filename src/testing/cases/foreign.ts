// Contract cases for stored data a backend must refuse to read: another format version, damage before the end.

import { serializeEvents } from "../../log/serialized-event.js";
import { balancedLog, header } from "../events.js";
import { rejectsWithCode } from "../expect.js";
import type { CaseRegistry } from "../registry.js";

/** Registers the cases for foreign and damaged data. */
export function foreignCases(cases: CaseRegistry): void {
  const tamperSkip = cases.limits.noTamper;

  cases.add(
    "load and loadFrom refuse a log of another session format version (FORMAT_UNSUPPORTED)",
    async (storage) => {
      const backend = await storage.open();
      await backend.create(header("foreign"), serializeEvents(balancedLog(1)));
      await storage.tamper().setFormatVersion("foreign", 1);
      const reader = await storage.open();
      await rejectsWithCode(reader.load("foreign"), "FORMAT_UNSUPPORTED", "a load of version 1");
      await rejectsWithCode(
        reader.loadFrom("foreign", 0),
        "FORMAT_UNSUPPORTED",
        "a loadFrom of version 1",
      );
    },
    tamperSkip,
  );

  cases.add(
    "load refuses a log with an unreadable event before its last turn/end (CORRUPT_LOG)",
    async (storage) => {
      const backend = await storage.open();
      await backend.create(header("damaged"), serializeEvents(balancedLog(2)));
      await storage.tamper().garble("damaged", 3);
      const reader = await storage.open();
      await rejectsWithCode(reader.load("damaged"), "CORRUPT_LOG", "a load of a damaged log");
    },
    tamperSkip,
  );
}
