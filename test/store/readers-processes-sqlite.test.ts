// docs/readers.md across real server processes on a sqlite store: the suite is test/helpers/readers-processes-suite.ts.
import { defineReadersSuite } from "../helpers/readers-processes-suite.js";

defineReadersSuite("sqlite");
