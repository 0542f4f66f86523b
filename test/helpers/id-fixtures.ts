// Session ids built to hit corners of the file-name encoding: a long id and a short id that the previous build stored under one name.
import { createHash } from "node:crypto";

/**
 * A long id (its encoding is shortened) and a short id whose plain encoding spells the name the
 * previous build gave the long one: 150 bytes of the long id's encoding (30 × `~0041`), `~`, and
 * 40 hex digits of its SHA-256. Found by trying suffixes until the hash starts with 4 decimal
 * digits (an escape `~XXXX` the short id can produce, of a unit that is escaped and allowed in
 * an id); the rest of the hash is lower-case hex, which the encoding keeps as it is.
 */
export function collidingIds(): { long: string; short: string; hash: string } {
  for (let i = 0; ; i++) {
    const long = `${"A".repeat(40)}${i}`;
    const hash = createHash("sha256").update(long, "utf8").digest("hex").slice(0, 40);
    const digits = hash.slice(0, 4);
    if (!/^[0-9]{4}$/.test(digits)) continue;
    const unit = Number.parseInt(digits, 16);
    const ch = String.fromCharCode(unit);
    if (unit < 0x20 || unit === 0x7f || /[a-z0-9._-]/.test(ch)) continue;
    return { long, short: `${"A".repeat(30)}${ch}${hash.slice(4)}`, hash };
  }
}
