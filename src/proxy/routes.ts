// Which provider API a path is, for the proxy's routes and for seedlineFetch: one table for both.
import { anthropicMessages } from "./anthropic-messages.js";
import { openaiChat } from "./openai-chat.js";
import { openaiResponses } from "./openai-responses.js";
import type { ProviderAdapter } from "./types.js";

/** A provider: where the proxy mounts it, its public endpoint, and the model-call paths it records. */
export interface Provider {
  readonly name: string;
  /** The proxy's path for the provider's base URL, e.g. `/openai/v1`. */
  readonly mount: string;
  /** The public base URL the mount stands for. */
  readonly upstream: string;
  /** Model-call paths below the base URL and their adapters. */
  readonly calls: Readonly<Record<string, ProviderAdapter>>;
}

/** The providers the proxy serves. Responses and Messages plug in here as adapters. */
export const PROVIDERS: readonly Provider[] = [
  {
    name: "openai",
    mount: "/openai/v1",
    upstream: "https://api.openai.com/v1",
    calls: { "/chat/completions": openaiChat, "/responses": openaiResponses },
  },
  {
    // Mounted at the SDKs' base URL (ANTHROPIC_BASE_URL has no /v1; the AI SDK's baseURL adds it).
    name: "anthropic",
    mount: "/anthropic",
    upstream: "https://api.anthropic.com",
    calls: { "/v1/messages": anthropicMessages },
  },
];

/** Where a proxy path leads: the provider, the rest of the path and the session it names. */
export interface ProxyRoute {
  readonly provider: Provider;
  /** The path below the provider's base URL, query included, e.g. `/chat/completions`. */
  readonly rest: string;
  readonly adapter: ProviderAdapter | undefined;
  readonly sessionId: string | undefined;
}

/** The route of a proxy request path (`/s/ID/openai/v1/…` or `/openai/v1/…`), or undefined. */
export function routeOf(pathAndQuery: string): ProxyRoute | undefined {
  let path = pathAndQuery;
  let sessionId: string | undefined;
  const named = /^\/s\/([^/]+)(\/.*)$/.exec(path);
  if (named !== null) {
    sessionId = decodeURIComponent(named[1] as string);
    path = named[2] as string;
  }
  for (const provider of PROVIDERS) {
    if (!path.startsWith(`${provider.mount}/`) && path !== provider.mount) continue;
    const rest = path.slice(provider.mount.length);
    const bare = rest.split("?")[0] as string;
    return { provider, rest, adapter: provider.calls[bare], sessionId };
  }
  return undefined;
}

/** The adapter for a full URL an SDK calls (its path ends in a model-call path), or undefined. */
export function adapterOfUrl(url: URL): ProviderAdapter | undefined {
  for (const provider of PROVIDERS) {
    for (const [path, adapter] of Object.entries(provider.calls)) {
      if (url.pathname.endsWith(path)) return adapter;
    }
  }
  return undefined;
}
