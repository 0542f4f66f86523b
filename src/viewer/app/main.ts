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

/** Where this origin's pages keep the token: `localStorage` is the viewer's own (scheme, host and port). */
const TOKEN_KEY = "seedline.token";

/**
 * The token of the address the viewer printed, else the one a page of this viewer kept. The
 * token is the page's to send (in the API's Authorization header, and in the live stream's
 * address): it is never a cookie, which the browser would send to every server on the same host
 * whatever its port. It is taken out of the address bar, so that a copied link or a screenshot
 * does not carry it.
 */
function takeToken(): { token: string | undefined; fromAddress: boolean } {
  const url = new URL(location.href);
  const token = url.searchParams.get("token") ?? undefined;
  if (token !== undefined) {
    url.searchParams.delete("token");
    history.replaceState(null, "", url.pathname + url.search + url.hash);
    return { token, fromAddress: true };
  }
  return { token: storage()?.getItem(TOKEN_KEY) ?? undefined, fromAddress: false };
}

/** This origin's localStorage, or undefined where the browser refuses it. */
function storage(): Storage | undefined {
  try {
    return window.localStorage;
  } catch {
    return undefined;
  }
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
    const { token, fromAddress } = takeToken();
    // A token from the address is kept once the viewer accepted it: a page that opened this
    // viewer with a wrong one does not replace the one that works.
    const http = new HttpSource(
      token,
      fromAddress && token !== undefined ? () => storage()?.setItem(TOKEN_KEY, token) : undefined,
    );
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
