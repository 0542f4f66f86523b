// The viewer's routes as data: parse an address into a route and write a route back as an address (deep links).

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
