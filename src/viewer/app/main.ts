// The viewer's browser entry: picks the data source (the HTTP API, or an export's embedded data) and mounts the app on #app.
import "./app.css";
import { render } from "preact";
import { App } from "./app.js";
import { html } from "./html.js";
import { useHashRouting } from "./router.js";
import { type DataSource, embeddedData, HttpSource, StaticSource } from "./source.js";

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
    source = new HttpSource(takeToken());
  }
  render(html`<${App} source=${source} initial=${data?.session.sessionId} />`, root);
}

if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
else start();
