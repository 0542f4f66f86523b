// Well-formed Unicode: text without a lone UTF-16 surrogate, as UTF-8 storage (SQLite, PostgreSQL) needs it.

/** A lone (unpaired) UTF-16 surrogate. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Whether `text` holds no lone surrogate (`String.prototype.isWellFormed`, ES2024). SQLite and
 * PostgreSQL store text as UTF-8, where a lone surrogate becomes U+FFFD: such text would be
 * stored as something else than it is (JSONL keeps it, escaped).
 */
export function isWellFormed(text: string): boolean {
  return !LONE_SURROGATE.test(text);
}
