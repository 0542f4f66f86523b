// The viewer's browser entry: mounts the app on #app once the document is parsed.
import "./app.css";

function start(): void {
  const root = document.getElementById("app");
  if (root !== null) root.textContent = "seedline";
}

if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
else start();
