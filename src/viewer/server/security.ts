// The viewer's guards: the random token every request must carry, the Host check against DNS rebinding, and the headers of every response.
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";

/** The cookie a page opened with `?token=` keeps the token in. */
export const TOKEN_COOKIE = "seedline_token";

/** What a request without the right token is told (401, text/plain). */
export const TOKEN_REFUSAL =
  "seedline ui: this address needs the token printed when the viewer started";

/** The Content-Security-Policy of every page the server sends: nothing but its own files. */
export const SERVER_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/** Headers of every response. */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  "Content-Security-Policy": SERVER_CSP,
  "X-Content-Type-Options": "nosniff",
  "Referrer-Policy": "no-referrer",
};

/** A new token: 32 random bytes, base64url. */
export function newToken(): string {
  return randomBytes(32).toString("base64url");
}

/**
 * Whether `given` is `expected`, compared in constant time (both hashed first, so their lengths
 * tell nothing either).
 */
export function tokenMatches(expected: string, given: string | undefined): boolean {
  if (given === undefined) return false;
  const a = createHash("sha256").update(expected).digest();
  const b = createHash("sha256").update(given).digest();
  return timingSafeEqual(a, b) && given.length === expected.length;
}

/** Where a request carries a token, and whether it came in the query (a page then sets the cookie). */
export interface GivenToken {
  readonly token: string | undefined;
  readonly fromQuery: boolean;
}

/** The token a request carries: `?token=`, else the cookie, else `Authorization: Bearer`. */
export function givenToken(req: IncomingMessage, url: URL): GivenToken {
  const query = url.searchParams.get("token");
  if (query !== null) return { token: query, fromQuery: true };
  const cookie = cookieValue(req.headers.cookie, TOKEN_COOKIE);
  if (cookie !== undefined) return { token: cookie, fromQuery: false };
  const auth = req.headers.authorization;
  const bearer = auth === undefined ? undefined : /^Bearer\s+(\S+)\s*$/i.exec(auth)?.[1];
  return { token: bearer, fromQuery: false };
}

function cookieValue(header: string | undefined, name: string): string | undefined {
  if (header === undefined) return undefined;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** The Set-Cookie value that keeps the token for the pages and requests that follow. */
export function tokenCookie(token: string): string {
  return `${TOKEN_COOKIE}=${token}; HttpOnly; SameSite=Strict; Path=/`;
}

/**
 * The Host headers a request may carry: the loopback names and `host` (when it is another), each
 * with `port`, lower-cased.
 */
export function allowedHosts(host: string, port: number): ReadonlySet<string> {
  const names = ["127.0.0.1", "localhost", "[::1]"];
  const bound = host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
  if (!names.includes(bound.toLowerCase())) names.push(bound.toLowerCase());
  return new Set(names.map((name) => `${name}:${port}`));
}
