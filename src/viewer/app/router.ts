// Client-side routes: deep links are paths (/s/<id>, /s/<id>/e/<seq>, /s/<id>/t/<turn>, …); an export routes in the hash.
import { useEffect, useState } from "preact/hooks";

export type SessionTab = "timeline" | "lineage" | "compare" | "replay";

export type Route =
  | { readonly name: "list"; readonly q: string; readonly cwd: string; readonly prefix: string }
  | {
      readonly name: "session";
      readonly id: string;
      readonly tab: SessionTab;
      /** Open the timeline at this event (`/e/<seq>`). */
      readonly seq?: number;
      /** Open the timeline at this turn (`/t/<turn>`). */
      readonly turn?: number;
    };

let hashMode = false;

/** Routes in `location.hash` instead of the path (an export is a file: its path is not ours). */
export function useHashRouting(): void {
  hashMode = true;
}

function currentLocation(): { path: string; search: string } {
  if (!hashMode) return { path: location.pathname, search: location.search };
  const hash = location.hash.replace(/^#/, "");
  const at = hash.indexOf("?");
  return at < 0 ? { path: hash, search: "" } : { path: hash.slice(0, at), search: hash.slice(at) };
}

const TABS: readonly string[] = ["lineage", "compare", "replay"];

/** The route of a path and query string. */
export function parseRoute(path: string, search: string): Route {
  const parts = path.split("/").filter((p) => p !== "");
  if (parts[0] === "s" && parts[1] !== undefined) {
    const id = decodeURIComponent(parts[1]);
    const [what, value] = [parts[2], parts[3]];
    const number = value === undefined ? Number.NaN : Number(value);
    if (what === "e" && Number.isSafeInteger(number) && number >= 0) {
      return { name: "session", id, tab: "timeline", seq: number };
    }
    if (what === "t" && Number.isSafeInteger(number) && number >= 0) {
      return { name: "session", id, tab: "timeline", turn: number };
    }
    if (what !== undefined && TABS.includes(what)) {
      return { name: "session", id, tab: what as SessionTab };
    }
    return { name: "session", id, tab: "timeline" };
  }
  const params = new URLSearchParams(search);
  return {
    name: "list",
    q: params.get("q") ?? "",
    cwd: params.get("cwd") ?? "",
    prefix: params.get("prefix") ?? "",
  };
}

/** The path of a route (what parseRoute reads back). */
export function routePath(route: Route): string {
  if (route.name === "list") {
    const params = new URLSearchParams();
    if (route.q !== "") params.set("q", route.q);
    if (route.cwd !== "") params.set("cwd", route.cwd);
    if (route.prefix !== "") params.set("prefix", route.prefix);
    const search = params.toString();
    return search === "" ? "/" : `/?${search}`;
  }
  const base = `/s/${encodeURIComponent(route.id)}`;
  if (route.seq !== undefined) return `${base}/e/${route.seq}`;
  if (route.turn !== undefined) return `${base}/t/${route.turn}`;
  return route.tab === "timeline" ? base : `${base}/${route.tab}`;
}

/** The href for a link to `path` (a hash link in an export). */
export function href(path: string): string {
  return hashMode ? `#${path}` : path;
}

const CHANGE = "seedline:route";

/** Goes to `path`; `replace` rewrites the current history entry instead of adding one. */
export function navigate(path: string, replace = false): void {
  if (hashMode) {
    if (replace) history.replaceState(null, "", `#${path}`);
    else location.hash = path;
  } else if (replace) history.replaceState(null, "", path);
  else history.pushState(null, "", path);
  window.dispatchEvent(new Event(CHANGE));
}

/** The current route, re-rendering on navigation and on back/forward. */
export function useRoute(): Route {
  const read = () => {
    const { path, search } = currentLocation();
    return parseRoute(path, search);
  };
  const [route, setRoute] = useState(read);
  useEffect(() => {
    const update = () => setRoute(read());
    window.addEventListener("popstate", update);
    window.addEventListener("hashchange", update);
    window.addEventListener(CHANGE, update);
    return () => {
      window.removeEventListener("popstate", update);
      window.removeEventListener("hashchange", update);
      window.removeEventListener(CHANGE, update);
    };
  }, []);
  return route;
}

/** Follows an in-app link without reloading the page (a plain click; modified clicks open tabs). */
export function onLinkClick(event: MouseEvent): void {
  if (event.defaultPrevented || event.button !== 0) return;
  if (event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
  const anchor = (event.target as Element | null)?.closest("a[data-route]");
  if (anchor === null || anchor === undefined) return;
  event.preventDefault();
  navigate(anchor.getAttribute("data-route") ?? "/");
}
