// Client-side routes: deep links are paths (/s/<id>, /s/<id>/e/<seq>, /s/<id>/t/<turn>, …); an export routes in the hash.
import { useEffect, useState } from "preact/hooks";
import { parseRoute, type Route } from "./routes.js";

export { parseRoute, type Route, routePath, type SessionTab } from "./routes.js";

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
