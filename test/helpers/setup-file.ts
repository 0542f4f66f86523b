// Vitest setup file, run before each test file: the cleanups its helpers registered run after it.
import { afterAll } from "vitest";
import { runFileEnd } from "./file-end.js";

// Registered before the file's own hooks: as after-hooks run in reverse, it runs after them.
afterAll(runFileEnd);
