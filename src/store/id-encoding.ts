// Maps session ids to file names: injective, inside one folder, safe on case-insensitive file systems.
import { createHash } from "node:crypto";

/** Encoded names longer than this many bytes are shortened with a hash of the id. */
const MAX_NAME_BYTES = 200;
/** What a shortened name keeps of the encoding before `~` and the hash. */
const KEPT_BYTES = 150;

/**
 * Encodes a session id as a file name (without suffix). `[a-z0-9._-]` stay as they are; every
 * other UTF-16 unit — upper-case letters and `~` included — becomes `~XXXX` (4 upper-case hex
 * digits), so ids differing only in case stay apart. The ids `.` and `..` are escaped whole. A
 * name over 200 bytes is cut to 150 bytes followed by `~` and the SHA-256 of the id (40 hex
 * digits); the file's header holds the real id.
 */
export function encodeSessionId(id: string): string {
  let name = "";
  for (let i = 0; i < id.length; i++) {
    const unit = id.charCodeAt(i);
    const ch = id[i] as string;
    name += /[a-z0-9._-]/.test(ch) ? ch : `~${unit.toString(16).toUpperCase().padStart(4, "0")}`;
  }
  if (id === "." || id === "..") name = [...id].map(() => "~002E").join("");
  if (name.length > MAX_NAME_BYTES) {
    const hash = createHash("sha256").update(id, "utf8").digest("hex").slice(0, 40);
    name = `${name.slice(0, KEPT_BYTES)}~${hash}`;
  }
  return name;
}
