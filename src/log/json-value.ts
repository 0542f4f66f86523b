// Lossless JSON: checks (or copies into frozen plain JSON) a caller's value, refusing anything JSON would change.

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

/**
 * A problem found below the top of a value. It is returned (not thrown) up the copy, and each
 * level adds its key on the way, so the JSON Pointer is only built when there is a problem.
 */
class Found {
  /** The keys from the problem up to the top (reversed at the end). */
  readonly keys: (string | number)[] = [];
  readonly found: string;
  /** Whether the problem is nesting deeper than {@link MAX_JSON_DEPTH}. */
  readonly tooDeep: boolean;

  constructor(found: string, tooDeep = false) {
    this.found = found;
    this.tooDeep = tooDeep;
  }
}

/**
 * Returns a deep, frozen copy of `value` when it is lossless JSON (null, booleans, finite numbers,
 * strings, dense arrays, plain objects, nested at most {@link MAX_JSON_DEPTH} deep), or the first
 * problem found. BigInt, `undefined`, NaN, ±Infinity, functions, symbols, Map, Set, Date, class
 * instances, sparse arrays and cycles are problems: `JSON.stringify` would drop or change them, so
 * the stored log would differ from what the caller holds. Only own members are copied, and a
 * member named `__proto__` stays an ordinary own member of the copy (as `JSON.parse` makes it), so
 * the copy holds, validates and serialises exactly the members the caller's value has.
 *
 * The depth limit bounds the recursion, so no input overflows the stack. A cycle shows as nesting
 * past the limit and is then reported where the value first repeats.
 */
export function copyJsonValue(value: unknown): { value: unknown } | { problem: JsonValueProblem } {
  const ancestors: object[] = [];
  const result = copy(value, ancestors);
  if (!(result instanceof Found)) return { value: result };
  return { problem: problemOf(result, ancestors) };
}

/**
 * The first problem that keeps `value` from being lossless JSON (see {@link copyJsonValue}, whose
 * rules and JSON Pointer it shares), or undefined when there is none: the same check without the
 * copy, for a value that is serialized at once (its JSON text is what is kept, not the value).
 */
export function jsonValueProblem(value: unknown): JsonValueProblem | undefined {
  inheritedEnumerables = hasEnumerableMembers(Object.prototype);
  const found = check(value, 0);
  if (found === undefined) return undefined;
  // The walk keeps no chain of the objects it is inside (it would be made for every value):
  // a too-deep problem's chain is found again from the top along its keys.
  return problemOf(found, found.tooDeep ? chainAlong(value, found.keys) : []);
}

/** The problem `found` reports, its path built on the way up; a too-deep chain that repeats is a cycle. */
function problemOf(result: Found, ancestors: readonly object[]): JsonValueProblem {
  const keys = result.keys.reverse();
  let found = result.found;
  if (result.tooDeep) {
    // `ancestors` holds the chain down to the problem: a repeated object is a cycle.
    const seen = new Set<object>();
    for (let i = 0; i < ancestors.length; i++) {
      const ancestor = ancestors[i] as object;
      if (seen.has(ancestor)) {
        keys.length = i;
        found = "a cycle";
        break;
      }
      seen.add(ancestor);
    }
  }
  return { path: keys.map(pointerToken).join(""), found };
}

/** The objects from `root` down along `reversedKeys` (a {@link Found}'s keys, from the problem up). */
function chainAlong(root: unknown, reversedKeys: readonly (string | number)[]): object[] {
  const chain: object[] = [];
  let at = root;
  for (let i = reversedKeys.length - 1; i >= 0 && typeof at === "object" && at !== null; i--) {
    chain.push(at);
    at = (at as Record<string | number, unknown>)[reversedKeys[i] as string | number];
  }
  if (typeof at === "object" && at !== null) chain.push(at);
  return chain;
}

/**
 * Whether Object.prototype has enumerable members (something added one), which `for…in` would
 * list beside a plain object's own: read at the start of each check.
 */
let inheritedEnumerables = false;

function hasEnumerableMembers(object: object): boolean {
  for (const _ in object) return true;
  return false;
}

function check(v: unknown, depth: number): Found | undefined {
  switch (typeof v) {
    case "string":
    case "boolean":
      return undefined;
    case "number":
      return Number.isFinite(v) ? undefined : new Found(String(v));
    case "object": {
      if (v === null) return undefined;
      if (depth >= MAX_JSON_DEPTH) {
        return new Found(`arrays or objects nested more than ${MAX_JSON_DEPTH} deep`, true);
      }
      return Array.isArray(v) ? checkArray(v, depth + 1) : checkObject(v, depth + 1);
    }
    case "undefined":
      return new Found("undefined");
    default:
      return new Found(`a ${typeof v}`);
  }
}

function checkArray(v: readonly unknown[], depth: number): Found | undefined {
  const length = v.length;
  for (let i = 0; i < length; i++) {
    if (!(i in v)) return at(new Found("a hole in a sparse array"), i);
    const found = check(v[i], depth);
    if (found !== undefined) return at(found, i);
  }
  return undefined;
}

function checkObject(v: object, depth: number): Found | undefined {
  const problem = prototypeProblem(v);
  if (problem !== undefined) return problem;
  // for…in lists the own enumerable members in Object.keys' order without making an array of
  // them; the prototype is Object.prototype or null, whose enumerable members (none, unless
  // something added one) it would list after them.
  for (const key in v) {
    if (inheritedEnumerables && !Object.hasOwn(v, key)) continue;
    const found = check((v as Record<string, unknown>)[key], depth);
    if (found !== undefined) return at(found, key);
  }
  return undefined;
}

/** Why an object is not a plain one (a class instance, or one with inherited members), if it is not. */
function prototypeProblem(v: object): Found | undefined {
  const proto = Object.getPrototypeOf(v);
  if (proto === Object.prototype || proto === null) return undefined;
  // A class's prototype holds its constructor; a bare object used as a prototype does not.
  const name = Object.hasOwn(proto, "constructor") ? proto.constructor?.name : undefined;
  return new Found(
    name ? `an instance of ${name}` : "an object with inherited members (a prototype)",
  );
}

function copy(v: unknown, ancestors: object[]): unknown {
  switch (typeof v) {
    case "string":
    case "boolean":
      return v;
    case "number":
      return Number.isFinite(v) ? v : new Found(String(v));
    case "object": {
      if (v === null) return null;
      if (ancestors.length >= MAX_JSON_DEPTH) {
        return new Found(`arrays or objects nested more than ${MAX_JSON_DEPTH} deep`, true);
      }
      ancestors.push(v);
      const out = Array.isArray(v) ? copyArray(v, ancestors) : copyObject(v, ancestors);
      // On a problem the chain is left in place for the cycle check.
      if (!(out instanceof Found)) ancestors.pop();
      return out;
    }
    case "undefined":
      return new Found("undefined");
    default:
      return new Found(`a ${typeof v}`);
  }
}

function copyArray(v: readonly unknown[], ancestors: object[]): unknown {
  const length = v.length;
  const out = new Array<unknown>(length);
  for (let i = 0; i < length; i++) {
    if (!(i in v)) return at(new Found("a hole in a sparse array"), i);
    const child = copy(v[i], ancestors);
    if (child instanceof Found) return at(child, i);
    out[i] = child;
  }
  return Object.freeze(out);
}

function copyObject(v: object, ancestors: object[]): unknown {
  const problem = prototypeProblem(v);
  if (problem !== undefined) return problem;
  const out: Record<string, unknown> = {};
  const keys = Object.keys(v);
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i] as string;
    const child = copy((v as Record<string, unknown>)[key], ancestors);
    if (child instanceof Found) return at(child, key);
    // Assigning `__proto__` would call Object.prototype's setter: the member would become the
    // copy's prototype (its members inherited, so validated but never written by JSON.stringify)
    // instead of a member. It is defined as an own member, as JSON.parse does.
    if (key === "__proto__") Object.defineProperty(out, key, ownMember(child));
    else out[key] = child;
  }
  return Object.freeze(out);
}

/** The descriptor of an ordinary own member (what assignment or JSON.parse would create). */
function ownMember(value: unknown): PropertyDescriptor {
  return { value, writable: true, enumerable: true, configurable: true };
}

/** Adds the key a problem was found under, on its way up. */
function at(found: Found, key: string | number): Found {
  found.keys.push(key);
  return found;
}

function pointerToken(member: string | number): string {
  return `/${typeof member === "number" ? member : member.replace(/~/g, "~0").replace(/\//g, "~1")}`;
}

/**
 * The first place a value that came from `JSON.parse` nests deeper than {@link MAX_JSON_DEPTH},
 * or undefined: `JSON.parse` reads any depth, but such a value could not be written back
 * (`JSON.stringify` overflows the stack), so a parsed event is held to the limit a copied one is.
 * Nothing else needs checking (a parsed value is lossless JSON, and a member named `__proto__` is
 * an own member: `JSON.parse` defines it). The value is left as it is, unfrozen: it is fresh from
 * `JSON.parse`, shared with no caller. A value frozen at the top (admitted before, or made by the
 * store) is not walked again.
 */
export function parsedDepthProblem(value: unknown): JsonValueProblem | undefined {
  if (typeof value !== "object" || value === null || Object.isFrozen(value)) return undefined;
  const found = depthWithin(value, 0);
  if (found === undefined) return undefined;
  return { path: found.keys.reverse().map(pointerToken).join(""), found: found.found };
}

/** Where `value` nests deeper than the limit, from `depth` on; undefined when it does not. */
function depthWithin(value: object, depth: number): Found | undefined {
  if (depth >= MAX_JSON_DEPTH) {
    return new Found(`arrays or objects nested more than ${MAX_JSON_DEPTH} deep`, true);
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const child: unknown = value[i];
      if (typeof child === "object" && child !== null) {
        const found = depthWithin(child, depth + 1);
        if (found !== undefined) return at(found, i);
      }
    }
  } else {
    for (const key in value) {
      const child: unknown = (value as Record<string, unknown>)[key];
      if (typeof child === "object" && child !== null) {
        const found = depthWithin(child, depth + 1);
        if (found !== undefined) return at(found, key);
      }
    }
  }
  return undefined;
}

/**
 * Freezes a value that came from `JSON.parse` in place (it is lossless by construction, and shares
 * no object between two places), so a log read from storage holds one copy of its events, not two.
 * A value already frozen at the top is returned as it is.
 */
export function freezeParsed<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) freezeTree(value, 0);
  return value;
}

/** Freezes `value` and everything below it: recursively down to the depth limit, then iteratively. */
function freezeTree(value: object, depth: number): void {
  if (depth === MAX_JSON_DEPTH) {
    freezeIteratively(value);
    return;
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const child: unknown = value[i];
      if (typeof child === "object" && child !== null) freezeTree(child, depth + 1);
    }
  } else {
    for (const key in value) {
      const child: unknown = (value as Record<string, unknown>)[key];
      if (typeof child === "object" && child !== null) freezeTree(child, depth + 1);
    }
  }
  Object.freeze(value);
}

/** Freezes a deeply nested parsed value with an explicit stack (no recursion). */
function freezeIteratively(value: object): void {
  const pending: object[] = [value];
  while (pending.length > 0) {
    const next = pending.pop() as object;
    Object.freeze(next);
    for (const key in next) {
      const child: unknown = (next as Record<string, unknown>)[key];
      if (typeof child === "object" && child !== null) pending.push(child);
    }
  }
}
