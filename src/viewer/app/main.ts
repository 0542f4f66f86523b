// The viewer's browser entry: picks the data source (the HTTP API, or an export's embedded data) and mounts the app on #app.
import "./app.css";
import { render } from "preact";
import { App } from "./app.js";
import { html } from "./html.js";
import { parseRoute, useHashRouting } from "./router.js";
import {
  type DataSource,
  embeddedData,
  HttpSource,
  StaticSource,
  sessionPath,
  timelinePath,
} from "./source.js";
import { PAGE_EVENTS } from "./timeline.js";

/**
 * The token of the address the viewer printed. The page request set the cookie with it; it is
 * kept for the API's Authorization header and taken out of the address bar, so that a copied
 * link or a screenshot does not carry it.
 */
function takeToken(): string | undefined {
  const url = new URL(location.href);
  const token = url.searchParams.get("token") ?? undefined;
  if (token !== undefined) {
    url.searchParams.delete("token");
    history.replaceState(null, "", url.pathname + url.search + url.hash);
  }
  return token;
}

function start(): void {
  const root = document.getElementById("app");
  if (root === null) return;
  const data = embeddedData();
  let source: DataSource;
  if (data !== undefined) {
    useHashRouting();
    source = new StaticSource(data);
  } else {
    const http = new HttpSource(takeToken());
    const route = parseRoute(location.pathname, location.search);
    if (route.name === "session" && route.tab === "timeline" && route.turn === undefined) {
      // What the timeline asks for first, asked now: the first screen waits for one round trip.
      const start = route.seq === undefined ? 0 : Math.floor(route.seq / PAGE_EVENTS) * PAGE_EVENTS;
      http.warm([sessionPath(route.id), timelinePath(route.id, start, PAGE_EVENTS)]);
    }
    source = http;
  }
  render(html`<${App} source=${source} initial=${data?.session.sessionId} />`, root);
}

if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
else start();
