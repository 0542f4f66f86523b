// Maps session ids to file names: injective, inside one folder, safe on case-insensitive file systems.
import { createHash } from "node:crypto";

/** Encoded names longer than this many bytes are shortened with a hash of the id. */
const MAX_NAME_BYTES = 200;
/** What a shortened name keeps of the encoding before the hash. */
const KEPT_BYTES = 150;
/** How many hex digits of the id's SHA-256 a shortened name ends in. */
const HASH_DIGITS = 40;
/** The length of a name the previous build shortened: the kept bytes, `~`, the hash. */
const LEGACY_HASHED_LENGTH = KEPT_BYTES + 1 + HASH_DIGITS;

/**
 * Encodes a session id as a file name (without suffix). `[a-z0-9._-]` stay as they are; every
 * other UTF-16 unit — upper-case letters and `~` included — becomes `~XXXX` (4 upper-case hex
 * digits), so ids differing only in case stay apart. The ids `.` and `..` are escaped whole. So
 * far every `~` is followed by 4 upper-case hex digits. A name over 200 bytes is cut to 150 bytes
 * followed by `~~` and the SHA-256 of the id (40 lower-case hex digits): the `~~` is what no plain
 * encoding holds, so a shortened name is never another id's plain name, and the mapping stays
 * injective (up to SHA-256 collisions); the file's header holds the real id.
 */
export function encodeSessionId(id: string): string {
  const name = plainName(id);
  return name.length > MAX_NAME_BYTES ? `${name.slice(0, KEPT_BYTES)}~~${hashOf(id)}` : name;
}

/**
 * The name the previous build gave an id whose encoding is shortened — 150 bytes, one `~`, the
 * hash — or undefined for an id whose encoding is not shortened. Such a name can be another,
 * shorter id's plain encoding (a `~` and four decimal digits are an escape, lower-case hex digits
 * stand for themselves), so a file found under it belongs to `id` only when its header says so.
 */
export function legacySessionIdName(id: string): string | undefined {
  const name = plainName(id);
  return name.length > MAX_NAME_BYTES ? `${name.slice(0, KEPT_BYTES)}~${hashOf(id)}` : undefined;
}

/** Whether `name`, an {@link encodeSessionId} result, is a shortened one (of a long id). */
export function isShortenedName(name: string): boolean {
  return name.length === KEPT_BYTES + 2 + HASH_DIGITS && name.startsWith("~~", KEPT_BYTES);
}

/**
 * Whether `name` is shaped like a name the previous build shortened (so that a file under it may
 * hold a long id's log rather than the log of the id the name encodes).
 */
export function mayBeLegacyHashedName(name: string): boolean {
  return (
    name.length === LEGACY_HASHED_LENGTH &&
    name.charCodeAt(KEPT_BYTES) === 0x7e &&
    /^[0-9a-f]+$/.test(name.slice(KEPT_BYTES + 1))
  );
}

/** The encoding before any shortening. */
function plainName(id: string): string {
  if (id === "." || id === "..") return [...id].map(() => "~002E").join("");
  let name = "";
  for (let i = 0; i < id.length; i++) {
    const ch = id[i] as string;
    name += /[a-z0-9._-]/.test(ch)
      ? ch
      : `~${id.charCodeAt(i).toString(16).toUpperCase().padStart(4, "0")}`;
  }
  return name;
}

function hashOf(id: string): string {
  return createHash("sha256").update(id, "utf8").digest("hex").slice(0, HASH_DIGITS);
}
