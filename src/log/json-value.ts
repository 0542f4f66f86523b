// Lossless JSON: copies a caller's value into frozen plain JSON, refusing anything JSON would change.

/** Where and why a value is not lossless JSON: `path` is a JSON Pointer into the value. */
export interface JsonValueProblem {
  readonly path: string;
  readonly found: string;
}

/**
 * The deepest nesting of arrays and objects a stored value may have. `JSON.stringify` overflows
 * the stack a few thousand levels down, so a deeper value could be accepted and then never be
 * written or read back; it is refused up front instead.
 */
export const MAX_JSON_DEPTH = 1000;

/** One array or object being copied: its source, its copy, and the next member to visit. */
interface Frame {
  readonly source: object;
  readonly out: unknown[] | Record<string, unknown>;
  /** Object keys, or undefined for an array (whose members are visited by index). */
  readonly keys: readonly string[] | undefined;
  index: number;
}

/**
 * Returns a deep, frozen copy of `value` when it is lossless JSON (null, booleans, finite numbers,
 * strings, dense arrays, plain objects, nested at most {@link MAX_JSON_DEPTH} deep), or the first
 * problem found. BigInt, `undefined`, NaN, ±Infinity, functions, symbols, Map, Set, Date, class
 * instances, sparse arrays and cycles are problems: `JSON.stringify` would drop or change them, so
 * the stored log would differ from what the caller holds.
 *
 * The walk is iterative (no recursion, so no stack overflow however deep the input), and the JSON
 * Pointer of a problem is only built when there is one.
 */
export function copyJsonValue(value: unknown): { value: unknown } | { problem: JsonValueProblem } {
  const stack: Frame[] = [];
  const ancestors = new Set<object>();
  const fail = (found: string, member?: string | number) => {
    const path = stack.map((f) => pointerStep(f, f.index - 1));
    // The failing member itself (the frame's index was already advanced past it).
    if (member !== undefined) path[path.length - 1] = pointerToken(member);
    return { problem: { path: path.join(""), found } };
  };

  // A scalar is returned as is; an array or object is pushed and filled in by the loop below.
  let root: unknown;
  const first = classify(value);
  if (first !== "container") {
    if (first !== undefined) return { problem: { path: "", found: first } };
    return { value };
  }
  {
    const opened = open(value as object);
    if (typeof opened === "string") return { problem: { path: "", found: opened } };
    root = opened.out;
    stack.push(opened);
    ancestors.add(value as object);
  }

  while (stack.length > 0) {
    const frame = stack[stack.length - 1] as Frame;
    const { source, out, keys } = frame;
    const length = keys === undefined ? (source as unknown[]).length : keys.length;
    if (frame.index === length) {
      Object.freeze(out);
      ancestors.delete(source);
      stack.pop();
      continue;
    }
    const i = frame.index++;
    let member: unknown;
    if (keys === undefined) {
      if (!(i in source)) return fail("a hole in a sparse array", i);
      member = (source as unknown[])[i];
    } else {
      member = (source as Record<string, unknown>)[keys[i] as string];
    }
    const kind = classify(member);
    if (kind === undefined) {
      setMember(frame, i, member);
      continue;
    }
    if (kind !== "container") return fail(kind, keys === undefined ? i : keys[i]);
    const child = member as object;
    if (ancestors.has(child)) return fail("a cycle", keys === undefined ? i : keys[i]);
    if (stack.length >= MAX_JSON_DEPTH) {
      return fail(
        `arrays or objects nested more than ${MAX_JSON_DEPTH} deep`,
        keys === undefined ? i : keys[i],
      );
    }
    const opened = open(child);
    if (typeof opened === "string") return fail(opened, keys === undefined ? i : keys[i]);
    setMember(frame, i, opened.out);
    ancestors.add(child);
    stack.push(opened);
  }
  return { value: root };
}

/** undefined for a lossless scalar, "container" for an array or object, else what was found. */
function classify(v: unknown): string | undefined {
  switch (typeof v) {
    case "string":
    case "boolean":
      return undefined;
    case "number":
      return Number.isFinite(v) ? undefined : String(v);
    case "object":
      return v === null ? undefined : "container";
    case "undefined":
      return "undefined";
    default:
      return `a ${typeof v}`;
  }
}

/** A frame for an array or plain object, or what makes it something else. */
function open(v: object): Frame | string {
  if (Array.isArray(v)) {
    return { source: v, out: new Array<unknown>(v.length), keys: undefined, index: 0 };
  }
  const proto = Object.getPrototypeOf(v);
  if (proto !== Object.prototype && proto !== null) {
    return `an instance of ${proto?.constructor?.name ?? "a class"}`;
  }
  return { source: v, out: {}, keys: Object.keys(v), index: 0 };
}

function setMember(frame: Frame, i: number, member: unknown): void {
  if (frame.keys === undefined) (frame.out as unknown[])[i] = member;
  else (frame.out as Record<string, unknown>)[frame.keys[i] as string] = member;
}

function pointerStep(frame: Frame, i: number): string {
  return pointerToken(frame.keys === undefined ? i : (frame.keys[i] as string));
}

function pointerToken(member: string | number): string {
  return `/${typeof member === "number" ? member : member.replace(/~/g, "~0").replace(/\//g, "~1")}`;
}

/**
 * Freezes a value that came from `JSON.parse` in place (it is lossless by construction), so a log
 * read from storage holds one copy of its events, not two. Iterative, like {@link copyJsonValue}.
 */
export function freezeParsed<T>(value: T): T {
  if (typeof value !== "object" || value === null || Object.isFrozen(value)) return value;
  const pending: object[] = [value];
  while (pending.length > 0) {
    const next = pending.pop() as object;
    Object.freeze(next);
    if (Array.isArray(next)) {
      for (let i = 0; i < next.length; i++) {
        const child: unknown = next[i];
        if (typeof child === "object" && child !== null && !Object.isFrozen(child))
          pending.push(child);
      }
    } else {
      for (const key in next) {
        const child: unknown = (next as Record<string, unknown>)[key];
        if (typeof child === "object" && child !== null && !Object.isFrozen(child))
          pending.push(child);
      }
    }
  }
  return value;
}
