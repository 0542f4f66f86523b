// Small text pieces of the timeline: Markdown, folded long output, token usage.
import type { TokenUsage } from "../../generated.js";
import { html } from "./html.js";
import { markdownHtml } from "./markdown.js";

/** Message text rendered as Markdown (markdown-it, html off: the log's own tags show as text). */
export function Markdown({ text }: { text: string }) {
  return html`<div class="md" dangerouslySetInnerHTML=${{ __html: markdownHtml(text) }}></div>`;
}

/** Output longer than this many lines is folded: its head shows, the rest one click away. */
export const FOLD_LINES = 12;

/** Plain text in a <pre>, as text nodes; long text folded to its first lines. */
export function Folded({ text, testid }: { text: string; testid?: string }) {
  const lines = text.split("\n");
  if (lines.length <= FOLD_LINES) return html`<pre class="out" data-testid=${testid}>${text}</pre>`;
  return html`<div class="folded" data-testid=${testid}>
    <pre class="out">${lines.slice(0, FOLD_LINES).join("\n")}</pre>
    <details class="fold">
      <summary>${lines.length - FOLD_LINES} more lines</summary>
      <pre class="out">${lines.slice(FOLD_LINES).join("\n")}</pre>
    </details>
  </div>`;
}

/** Token counts of one model call, on one line. */
export function Usage({ usage }: { usage: TokenUsage }) {
  const parts = [`in ${usage.inputTokens}`, `out ${usage.outputTokens}`];
  if (usage.cacheReadTokens !== undefined) parts.push(`cache read ${usage.cacheReadTokens}`);
  if (usage.cacheWriteTokens !== undefined) parts.push(`cache write ${usage.cacheWriteTokens}`);
  if (usage.reasoningTokens !== undefined) parts.push(`reasoning ${usage.reasoningTokens}`);
  return html`<span class="usage" data-testid="usage">tokens: ${parts.join(" · ")}</span>`;
}

/** A JSON value pretty-printed when the text parses as JSON, else the text unchanged. */
export function pretty(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}
