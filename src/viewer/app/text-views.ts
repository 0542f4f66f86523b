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
/** Output longer than this many characters (long lines wrap) is folded likewise. */
export const FOLD_CHARS = 1200;

/** Where `text` folds: the end of its head, or undefined when it is short enough to show whole. */
function foldAt(text: string): { at: number; rest: string } | undefined {
  let at = -1;
  for (let i = 0; i < FOLD_LINES; i++) {
    at = text.indexOf("\n", at + 1);
    if (at < 0) break;
  }
  const byLines = at < 0 ? text.length : at;
  const end = Math.min(byLines, FOLD_CHARS);
  if (end >= text.length) return undefined;
  const restLines = text.slice(end).split("\n").length - 1;
  const rest = restLines > 0 ? `${restLines} more lines` : `${text.length - end} more characters`;
  return { at: end, rest };
}

/** Plain text in a <pre>, as text nodes; long text folded to its head. */
export function Folded({ text, testid }: { text: string; testid?: string }) {
  const fold = foldAt(text);
  if (fold === undefined) return html`<pre class="out" data-testid=${testid}>${text}</pre>`;
  return html`<div class="folded" data-testid=${testid}>
    <pre class="out">${text.slice(0, fold.at)}</pre>
    <details class="fold">
      <summary>${fold.rest}</summary>
      <pre class="out">${text.slice(fold.at).replace(/^\n/, "")}</pre>
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
