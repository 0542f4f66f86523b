// A session's replay script entry by entry (chunks, throw, hang), as an agent under test receives it.
import { useEffect, useState } from "preact/hooks";
import type { StreamChunk } from "../../generated.js";
import type { ReplayEntry, ReplayScript } from "./api-types.js";
import { plural } from "./format.js";
import { html } from "./html.js";
import { type DataSource, errorText } from "./source.js";
import { Folded } from "./text-views.js";

/** The text, reasoning and tool calls an entry's chunks stream, joined. */
function assembled(chunks: readonly StreamChunk[]) {
  let text = "";
  let reasoning = "";
  const tools = new Map<string, { name: string; args: string }>();
  for (const chunk of chunks) {
    if (chunk.type === "text-delta") text += chunk.text;
    else if (chunk.type === "reasoning-delta") reasoning += chunk.text;
    else if (chunk.type === "tool-call-delta") {
      const tool = tools.get(chunk.id) ?? { name: "", args: "" };
      tool.name ||= chunk.name ?? "";
      tool.args += chunk.argumentsDelta;
      tools.set(chunk.id, tool);
    }
  }
  return { text, reasoning, tools: [...tools] };
}

function Entry({ entry, index }: { entry: ReplayEntry; index: number }) {
  const { text, reasoning, tools } = assembled(entry.chunks);
  return html`<li class=${`replay-entry kind-${entry.kind}`} data-testid="replay-entry" data-kind=${entry.kind}>
    <div class="who">entry ${index + 1} · <span class=${`badge${entry.kind === "chunks" ? "" : " bad"}`}>${entry.kind}</span>
      <span class="muted">${plural(entry.chunks.length, "chunk")}</span></div>
    ${reasoning !== "" && html`<details class="reasoning"><summary>reasoning</summary><pre class="out">${reasoning}</pre></details>`}
    ${text !== "" && html`<pre class="out">${text}</pre>`}
    ${tools.map(([id, tool]) => html`<div class="muted">tool call ${tool.name} <span>${id}</span></div>${tool.args && html`<${Folded} text=${tool.args} />`}`)}
    ${entry.kind === "throw" && html`<div class="error">throws: ${entry.message}${entry.code ? ` (${entry.code})` : ""}</div>`}
    ${entry.kind === "hang" && html`<div class="muted">then hangs until the caller cancels</div>`}
    <details class="raw"><summary>chunks</summary>
      ${entry.chunks.map((chunk) => html`<pre class="out">${JSON.stringify(chunk)}</pre>`)}
    </details>
  </li>`;
}

export function Replay({ source, id }: { source: DataSource; id: string }) {
  const [script, setScript] = useState<ReplayScript | undefined>();
  const [error, setError] = useState<string | undefined>();
  useEffect(() => {
    setScript(undefined);
    source.replay(id).then(setScript, (e: unknown) => setError(errorText(e)));
  }, [source, id]);
  if (error !== undefined) return html`<div class="error" data-testid="error">${error}</div>`;
  if (script === undefined) return html`<div class="muted">loading…</div>`;
  return html`<div class="replay" data-testid="replay">
    <p class="muted">
      ${script.entries.length} ${script.entries.length === 1 ? "entry" : "entries"} — one per recorded model call${script.seedLength > 0 ? `, after the ${script.seedLength} inherited events of the seed` : ""}.
    </p>
    <ol class="replay-entries">
      ${script.entries.map((entry, i) => html`<${Entry} entry=${entry} index=${i} />`)}
    </ol>
  </div>`;
}
