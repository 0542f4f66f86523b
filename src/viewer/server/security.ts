// The viewer's guards: the random token every API request must carry, the Host check against DNS rebinding, the origin check of writes, and the headers of every response.
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";

/**
 * The cookie older viewers kept the token in. It is no credential any more: cookies are not bound
 * to a port, so the browser sent it to every server on 127.0.0.1. A request that still carries it
 * is answered with {@link CLEAR_LEGACY_COOKIE}.
 */
export const LEGACY_TOKEN_COOKIE = "seedline_token";

/** The Set-Cookie value that makes the browser drop {@link LEGACY_TOKEN_COOKIE}. */
export const CLEAR_LEGACY_COOKIE = `${LEGACY_TOKEN_COOKIE}=; Max-Age=0; HttpOnly; SameSite=Strict; Path=/`;

/** What a request without the right token is told (401). */
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

/** Where a request carries a token. */
export interface GivenToken {
  readonly token: string | undefined;
  /** True when it came in `Authorization: Bearer`: a header no form, image or no-cors request can send. */
  readonly inHeader: boolean;
}

/**
 * The token a request carries: `Authorization: Bearer`, else `?token=` (the live stream's
 * EventSource cannot send a header). Never a cookie: the browser would send one to every port of
 * the host, so any other local server the user visits would receive it.
 */
export function givenToken(req: IncomingMessage, url: URL): GivenToken {
  const auth = req.headers.authorization;
  if (auth !== undefined) {
    return { token: /^Bearer\s+(\S+)\s*$/i.exec(auth)?.[1], inHeader: true };
  }
  return { token: url.searchParams.get("token") ?? undefined, inHeader: false };
}

/** Whether the request carries {@link LEGACY_TOKEN_COOKIE}. */
export function hasLegacyCookie(req: IncomingMessage): boolean {
  const header = req.headers.cookie;
  if (header === undefined) return false;
  return header.split(";").some((part) => part.split("=")[0]?.trim() === LEGACY_TOKEN_COOKIE);
}

/**
 * Why a write request is refused as coming from another origin, or undefined when it may go on.
 * A browser names the page that made a request in `Origin` and, since 2020, tells in
 * `Sec-Fetch-Site` whether it is the server's own origin; either that says "another" refuses the
 * write. A client that is no browser (curl) sends neither. Another port of the same host is
 * another origin (though the same site): it is refused too.
 */
export function crossOriginWrite(
  req: IncomingMessage,
  hosts: ReadonlySet<string>,
): string | undefined {
  const origin = req.headers.origin;
  if (origin !== undefined) {
    const own = [...hosts].map((host) => `http://${host}`);
    if (!own.includes(origin.toLowerCase())) {
      return `expected a write from the viewer's own page (Origin ${own.join(" or ")}), got Origin ${JSON.stringify(origin)}`;
    }
  }
  const site = req.headers["sec-fetch-site"];
  if (site !== undefined && site !== "same-origin" && site !== "none") {
    return `expected a write from the viewer's own page (Sec-Fetch-Site same-origin), got Sec-Fetch-Site ${JSON.stringify(site)}`;
  }
  return undefined;
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
