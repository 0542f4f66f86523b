// The app's frame: header with the search box, the current route's view, keyboard handling.
import { useEffect } from "preact/hooks";
import { html } from "./html.js";
import { onKeyDown, SEARCH_INPUT_ID } from "./keyboard.js";
import { href, navigate, onLinkClick, type Route, routePath, useRoute } from "./router.js";
import { Session } from "./session.js";
import { Sessions } from "./sessions.js";
import type { DataSource } from "./source.js";

function Header({ route, source }: { route: Route; source: DataSource }) {
  const q = route.name === "list" ? route.q : "";
  const onInput = (event: Event) => {
    const value = (event.target as HTMLInputElement).value;
    const base =
      route.name === "list" ? route : { name: "list" as const, q: "", cwd: "", prefix: "" };
    navigate(routePath({ ...base, q: value }), route.name === "list");
  };
  return html`<header class="top">
    <a class="brand" href=${href("/")} data-route="/">seedline</a>
    ${
      !source.isStatic &&
      html`<input id=${SEARCH_INPUT_ID} data-testid="search" type="search" value=${q}
        placeholder="search messages and tool text  ( / )" onInput=${onInput} autocomplete="off" />`
    }
    <span class="keys muted">j/k turns · / search · Esc back</span>
  </header>`;
}

export function App({ source, initial }: { source: DataSource; initial?: string }) {
  const route = useRoute();
  useEffect(() => {
    const handler = (event: KeyboardEvent) => onKeyDown(event, route, source.isStatic);
    window.addEventListener("keydown", handler);
    return () => window.removeEventListener("keydown", handler);
  }, [route, source]);
  // An export opens on its one session.
  const shown: Route =
    route.name === "list" && source.isStatic && initial !== undefined
      ? { name: "session", id: initial, tab: "timeline" }
      : route;
  return html`<div class="app" onClick=${onLinkClick}>
    <${Header} route=${shown} source=${source} />
    ${
      shown.name === "list"
        ? html`<${Sessions} source=${source} route=${shown} />`
        : html`<${Session} key=${shown.id} source=${source} id=${shown.id} tab=${shown.tab} seq=${shown.seq} turn=${shown.turn} />`
    }
  </div>`;
}
