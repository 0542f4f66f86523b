// Markdown for message text: markdown-it with html off (raw HTML in a log is escaped), no linkify, no images.
import MarkdownIt from "markdown-it";

let instance: ReturnType<typeof MarkdownIt> | undefined;

/**
 * The one markdown-it instance, made on first use: building it (its rules, entity tables) is the
 * dearest part of the app's start, and the first page's request need not wait for it.
 */
function markdown(): ReturnType<typeof MarkdownIt> {
  if (instance !== undefined) return instance;
  const md = new MarkdownIt({ html: false, linkify: false, breaks: true });
  // An image in a log would make the browser fetch from where the log points; the CSP blocks it
  // anyway, the rule is off so that nothing tries.
  md.disable("image");
  const defaultLink =
    md.renderer.rules.link_open ??
    ((tokens, idx, options, _env, self) => self.renderToken(tokens, idx, options));
  md.renderer.rules.link_open = (tokens, idx, options, env, self) => {
    const token = tokens[idx];
    token?.attrSet("rel", "noopener noreferrer");
    token?.attrSet("target", "_blank");
    return defaultLink(tokens, idx, options, env, self);
  };
  instance = md;
  return md;
}

/**
 * The HTML of `text` as Markdown. markdown-it escapes every `<`, `>` and `&` of the text itself
 * (html: false) and refuses javascript:/vbscript:/data: links, so the output holds only the tags
 * Markdown makes: this is the one string the app puts into innerHTML.
 */
export function markdownHtml(text: string): string {
  return markdown().render(text);
}
