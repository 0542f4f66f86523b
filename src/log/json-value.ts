// Lossless JSON: copies a caller's value into frozen plain JSON, refusing anything JSON would change.

/** Where and why a value is not lossless JSON: `path` is a JSON Pointer into the value. */
export interface JsonValueProblem {
  readonly path: string;
  readonly found: string;
}

/**
 * Returns a deep, frozen copy of `value` when it is lossless JSON (null, booleans, finite numbers,
 * strings, dense arrays, plain objects), or the first problem found. BigInt, `undefined`, NaN,
 * ±Infinity, functions, symbols, Map, Set, Date, class instances, sparse arrays and cycles are
 * problems: `JSON.stringify` would drop or change them, so the stored log would differ from what
 * the caller holds.
 */
export function copyJsonValue(value: unknown): { value: unknown } | { problem: JsonValueProblem } {
  const ancestors = new Set<object>();
  let problem: JsonValueProblem | undefined;

  const copy = (v: unknown, path: string): unknown => {
    switch (typeof v) {
      case "string":
      case "boolean":
        return v;
      case "number":
        if (Number.isFinite(v)) return v;
        problem = { path, found: String(v) };
        return undefined;
      case "object": {
        if (v === null) return null;
        if (ancestors.has(v)) {
          problem = { path, found: "a cycle" };
          return undefined;
        }
        ancestors.add(v);
        const out = Array.isArray(v) ? copyArray(v, path) : copyObject(v, path);
        ancestors.delete(v);
        return out;
      }
      default:
        problem = { path, found: typeof v === "undefined" ? "undefined" : `a ${typeof v}` };
        return undefined;
    }
  };

  const copyArray = (v: readonly unknown[], path: string): unknown => {
    const out = new Array<unknown>(v.length);
    for (let i = 0; i < v.length; i++) {
      if (!(i in v)) {
        problem = { path: `${path}/${i}`, found: "a hole in a sparse array" };
        return undefined;
      }
      out[i] = copy(v[i], `${path}/${i}`);
      if (problem) return undefined;
    }
    return Object.freeze(out);
  };

  const copyObject = (v: object, path: string): unknown => {
    const proto = Object.getPrototypeOf(v);
    if (proto !== Object.prototype && proto !== null) {
      problem = { path, found: `an instance of ${proto?.constructor?.name ?? "a class"}` };
      return undefined;
    }
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(v)) {
      const child = copy((v as Record<string, unknown>)[key], `${path}/${escapePointer(key)}`);
      if (problem) return undefined;
      out[key] = child;
    }
    return Object.freeze(out);
  };

  const result = copy(value, "");
  return problem ? { problem } : { value: result };
}

/**
 * Freezes a value that came from `JSON.parse` in place (it is lossless by construction), so a log
 * read from storage holds one copy of its events, not two.
 */
export function freezeParsed<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    for (const child of Object.values(value)) freezeParsed(child);
    Object.freeze(value);
  }
  return value;
}

function escapePointer(key: string): string {
  return key.replace(/~/g, "~0").replace(/\//g, "~1");
}
