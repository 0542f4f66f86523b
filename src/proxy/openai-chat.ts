// The OpenAI Chat Completions adapter: requests to neutral form, SSE and JSON responses to stream chunks, and back.
import type {
  ContentBlock,
  FinishReason,
  ModelResponse,
  StreamChunk,
  TokenUsage,
} from "../generated.js";
import { assembleMessage } from "../replay/assemble.js";
import { sseText } from "./sse.js";
import type {
  MappedResponse,
  NeutralMessage,
  NeutralRequest,
  ProviderAdapter,
  RecordedCall,
  RenderedAnswer,
  StreamMapper,
} from "./types.js";

type Json = Record<string, unknown>;
type Unmapped = NonNullable<ModelResponse["unmapped"]>[number];

/** Request members that are not `params`: the fingerprint keeps them apart or not at all. */
const NOT_PARAMS = new Set(["model", "messages", "tools", "stream", "stream_options"]);
/** Members of a response that describe the whole response, kept in `meta`. */
const ENVELOPE = ["id", "object", "created", "model", "system_fingerprint", "service_tier"];
/** Random padding OpenAI adds to stream events against length side channels: it carries nothing. */
const PADDING = "obfuscation";
/** Delta members the chunk kinds express. */
const MAPPED_DELTA = new Set(["role", "content", "tool_calls", "reasoning_content", "reasoning"]);

function isObject(value: unknown): value is Json {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** Text blocks of a message's `content`: a string, content parts, or null. */
function contentBlocks(content: unknown): ContentBlock[] {
  if (typeof content === "string") return content === "" ? [] : [{ type: "text", text: content }];
  if (!Array.isArray(content)) return [];
  return content.map((part): ContentBlock => {
    if (isObject(part) && (part.type === "text" || part.type === "refusal")) {
      const text = part.type === "text" ? part.text : part.refusal;
      if (typeof text === "string") return { type: "text", text };
    }
    // An image or audio part has no content block kind: its JSON stands in for it.
    return { type: "text", text: JSON.stringify(part) };
  });
}

function neutralMessage(message: unknown): NeutralMessage | undefined {
  if (!isObject(message) || typeof message.role !== "string") return undefined;
  const toolCalls = Array.isArray(message.tool_calls)
    ? message.tool_calls.map((call) => {
        const fn = isObject(call) && isObject(call.function) ? call.function : {};
        return {
          id: isObject(call) && typeof call.id === "string" ? call.id : "",
          name: typeof fn.name === "string" ? fn.name : "",
          arguments: typeof fn.arguments === "string" ? fn.arguments : "",
        };
      })
    : [];
  return {
    role: message.role,
    content: contentBlocks(message.content),
    ...(toolCalls.length === 0 ? {} : { toolCalls }),
    ...(typeof message.tool_call_id === "string" ? { toolCallId: message.tool_call_id } : {}),
  };
}

function parseRequest(body: unknown): NeutralRequest | undefined {
  if (!isObject(body) || typeof body.model !== "string" || !Array.isArray(body.messages)) {
    return undefined;
  }
  const messages: NeutralMessage[] = [];
  for (const m of body.messages) {
    const neutral = neutralMessage(m);
    if (neutral === undefined) return undefined;
    messages.push(neutral);
  }
  const tools = Array.isArray(body.tools)
    ? body.tools.map((tool) => {
        const fn = isObject(tool) && isObject(tool.function) ? tool.function : {};
        const name = typeof fn.name === "string" ? fn.name : isObject(tool) ? tool.type : "";
        return { name: typeof name === "string" ? name : "", definition: tool };
      })
    : [];
  const params = Object.fromEntries(Object.entries(body).filter(([k]) => !NOT_PARAMS.has(k)));
  return { model: body.model, stream: body.stream === true, params, messages, tools };
}

function usageOf(raw: Json): TokenUsage {
  const n = (v: unknown) => (typeof v === "number" && Number.isSafeInteger(v) && v >= 0 ? v : 0);
  const prompt = isObject(raw.prompt_tokens_details) ? raw.prompt_tokens_details : {};
  const completion = isObject(raw.completion_tokens_details) ? raw.completion_tokens_details : {};
  return {
    inputTokens: n(raw.prompt_tokens),
    outputTokens: n(raw.completion_tokens),
    ...(prompt.cached_tokens === undefined ? {} : { cacheReadTokens: n(prompt.cached_tokens) }),
    ...(completion.reasoning_tokens === undefined
      ? {}
      : { reasoningTokens: n(completion.reasoning_tokens) }),
  };
}

function finishOf(reason: unknown): FinishReason {
  switch (reason) {
    case "length":
      return { kind: "max-tokens" };
    case "tool_calls":
    case "function_call":
      return { kind: "tool-calls" };
    default:
      // `stop`, `content_filter` and any later reason: the raw one stays in meta.finish_reason.
      return { kind: "stop" };
  }
}

/** Collects chunks block by block: Chat Completions has one text block and one block per tool call. */
class ChunkBuilder {
  readonly chunks: StreamChunk[] = [];
  readonly meta: Json = {};
  readonly unmapped: Unmapped[] = [];
  #next = 0;
  #text: number | undefined;
  #reasoning: number | undefined;
  readonly #tools = new Map<number, { index: number; id: string }>();
  #finish: unknown = undefined;
  error: { message: string; code?: string } | undefined;

  envelope(event: Json): void {
    for (const key of ENVELOPE) {
      if (this.meta[key] === undefined && event[key] !== undefined) this.meta[key] = event[key];
    }
  }

  keep(event: unknown): void {
    this.unmapped.push({ at: this.chunks.length, event: event as Unmapped["event"] });
  }

  text(text: string): void {
    if (text === "") return;
    if (this.#text === undefined) {
      this.#text = this.#next++;
      this.chunks.push({ type: "block-start", index: this.#text, blockType: "text" });
    }
    this.chunks.push({ type: "text-delta", index: this.#text, text });
  }

  reasoning(text: string, field: string): void {
    if (text === "") return;
    this.meta.reasoning_field = field;
    if (this.#reasoning === undefined) {
      this.#reasoning = this.#next++;
      this.chunks.push({ type: "block-start", index: this.#reasoning, blockType: "reasoning" });
    }
    this.chunks.push({ type: "reasoning-delta", index: this.#reasoning, text });
  }

  toolCall(call: Json, position: number): void {
    const at = typeof call.index === "number" ? call.index : position;
    const fn = isObject(call.function) ? call.function : {};
    let tool = this.#tools.get(at);
    const first = tool === undefined;
    if (tool === undefined) {
      tool = { index: this.#next++, id: typeof call.id === "string" ? call.id : `call_${at}` };
      this.#tools.set(at, tool);
      this.chunks.push({ type: "block-start", index: tool.index, blockType: "tool-call" });
    }
    this.chunks.push({
      type: "tool-call-delta",
      index: tool.index,
      id: tool.id,
      ...(first || typeof fn.name === "string" ? { name: String(fn.name ?? "") } : {}),
      argumentsDelta: typeof fn.arguments === "string" ? fn.arguments : "",
    });
  }

  usage(raw: Json): void {
    this.meta.usage = raw;
    this.chunks.push({ type: "usage", usage: usageOf(raw) });
  }

  finish(reason: unknown): void {
    this.#finish = reason;
    this.meta.finish_reason = reason;
  }

  /** One choice of a chunk or response; `delta` is its delta or message. */
  choice(choice: Json, delta: Json): void {
    if (typeof delta.content === "string") this.text(delta.content);
    for (const field of ["reasoning_content", "reasoning"]) {
      const value = delta[field];
      if (typeof value === "string") this.reasoning(value, field);
    }
    if (Array.isArray(delta.tool_calls)) {
      delta.tool_calls.forEach((call, i) => {
        if (isObject(call)) this.toolCall(call, i);
      });
    }
    const rest = Object.fromEntries(
      Object.entries(delta).filter(([k, v]) => !MAPPED_DELTA.has(k) && v !== null && !empty(v)),
    );
    const logprobs = choice.logprobs ?? null;
    if (Object.keys(rest).length > 0 || logprobs !== null) {
      this.keep({
        choice: choice.index ?? 0,
        ...(Object.keys(rest).length > 0 ? { delta: rest } : {}),
        ...(logprobs === null ? {} : { logprobs }),
      });
    }
    if (choice.finish_reason !== null && choice.finish_reason !== undefined) {
      this.finish(choice.finish_reason);
    }
  }

  end(): MappedResponse {
    const finished = this.#finish !== undefined && this.error === undefined;
    const chunks = [...this.chunks];
    if (finished) {
      const blocks = assembleMessage(chunks);
      const ends = [...new Set(chunks.map((c) => ("index" in c ? c.index : -1)))]
        .filter((i) => i >= 0)
        .sort((a, b) => a - b);
      ends.forEach((index, i) => {
        chunks.push({ type: "block-end", index, block: blocks[i] as ContentBlock });
      });
      chunks.push({ type: "finish", reason: finishOf(this.#finish) });
    }
    return {
      chunks,
      meta: { ...this.meta },
      unmapped: [...this.unmapped],
      finished,
      ...(this.error === undefined ? {} : { error: this.error }),
    };
  }
}

function empty(value: unknown): boolean {
  return Array.isArray(value) && value.length === 0;
}

function errorOfBody(body: unknown): { message: string; code?: string } | undefined {
  if (!isObject(body) || !isObject(body.error)) return undefined;
  const e = body.error;
  const message = typeof e.message === "string" ? e.message : JSON.stringify(e);
  const code =
    typeof e.code === "string" ? e.code : typeof e.type === "string" ? e.type : undefined;
  return { message, ...(code === undefined ? {} : { code }) };
}

function streamMapper(): StreamMapper {
  const builder = new ChunkBuilder();
  return {
    event(name, data) {
      if (data === "[DONE]") return;
      let event: unknown;
      try {
        event = JSON.parse(data);
      } catch {
        builder.keep(data);
        return;
      }
      if (!isObject(event)) return builder.keep(event);
      const error = errorOfBody(event);
      if (error !== undefined) {
        builder.error = error;
        // Kept with its SSE event name (`event: error` from compatible servers), as it came.
        builder.keep({ ...event, ...(name === undefined ? {} : { sseEvent: name }) });
        return;
      }
      builder.envelope(event);
      const choices = Array.isArray(event.choices) ? event.choices : [];
      for (const choice of choices) {
        if (!isObject(choice)) continue;
        // Only the first choice streams into the step; others (n > 1) are kept as they came.
        if ((choice.index ?? 0) !== 0) builder.keep({ choice });
        else builder.choice(choice, isObject(choice.delta) ? choice.delta : {});
      }
      if (isObject(event.usage)) builder.usage(event.usage);
      const extra = Object.keys(event).filter(
        (k) =>
          !ENVELOPE.includes(k) &&
          !["choices", "usage", PADDING].includes(k) &&
          event[k] !== null &&
          event[k] !== undefined,
      );
      if (extra.length > 0)
        builder.keep({ extra: Object.fromEntries(extra.map((k) => [k, event[k]])) });
    },
    end: () => builder.end(),
  };
}

function mapJson(body: unknown): MappedResponse {
  const builder = new ChunkBuilder();
  if (!isObject(body)) {
    builder.keep(body);
    return builder.end();
  }
  builder.envelope(body);
  const choices = Array.isArray(body.choices) ? body.choices : [];
  for (const choice of choices) {
    if (!isObject(choice)) continue;
    if ((choice.index ?? 0) !== 0) builder.keep({ choice });
    else builder.choice(choice, isObject(choice.message) ? choice.message : {});
  }
  if (isObject(body.usage)) builder.usage(body.usage);
  return builder.end();
}

/** The response envelope replay answers with: as recorded, or made up from the step's place. */
function metaOf(call: RecordedCall): Json {
  return (call.end?.response?.meta ?? {}) as Json;
}

function envelopeOf(call: RecordedCall, object: string): Json {
  const meta = metaOf(call);
  return {
    id: meta.id ?? `chatcmpl-seedline-${call.start.turn}-${call.start.step}`,
    object,
    created: meta.created ?? 0,
    model: meta.model ?? call.start.request?.model ?? "",
    ...(meta.service_tier === undefined ? {} : { service_tier: meta.service_tier }),
    ...(meta.system_fingerprint === undefined
      ? {}
      : { system_fingerprint: meta.system_fingerprint }),
  };
}

function finishReasonOf(call: RecordedCall): unknown {
  const raw = metaOf(call).finish_reason;
  if (raw !== undefined) return raw;
  const finish = call.chunks.find((c) => c.type === "finish");
  if (finish?.type !== "finish") return null;
  const names: Record<string, string> = { "tool-calls": "tool_calls", "max-tokens": "length" };
  return names[finish.reason.kind] ?? "stop";
}

function usageJson(call: RecordedCall): Json | undefined {
  const raw = metaOf(call).usage;
  if (isObject(raw)) return raw;
  const chunk = [...call.chunks].reverse().find((c) => c.type === "usage");
  if (chunk?.type !== "usage") return undefined;
  const u = chunk.usage;
  return {
    prompt_tokens: u.inputTokens,
    completion_tokens: u.outputTokens,
    total_tokens: u.inputTokens + u.outputTokens,
  };
}

function renderJson(call: RecordedCall): string {
  const blocks = assembleMessage(call.chunks);
  const text = blocks.flatMap((b) => (b.type === "text" ? [b.text] : [])).join("");
  const reasoning = blocks.flatMap((b) => (b.type === "reasoning" ? [b.text] : [])).join("");
  const calls = blocks.flatMap((b) =>
    b.type === "tool-call"
      ? [{ id: b.id, type: "function", function: { name: b.name, arguments: b.arguments } }]
      : [],
  );
  const field = metaOf(call).reasoning_field;
  const message: Json = {
    role: "assistant",
    content: text === "" && calls.length > 0 ? null : text,
    ...(reasoning === ""
      ? {}
      : { [typeof field === "string" ? field : "reasoning_content"]: reasoning }),
    refusal: null,
    ...(calls.length === 0 ? {} : { tool_calls: calls }),
  };
  for (const kept of call.end?.response?.unmapped ?? []) {
    const e = kept.event;
    if (isObject(e) && e.choice === 0 && isObject(e.delta)) Object.assign(message, e.delta);
  }
  const usage = usageJson(call);
  return JSON.stringify({
    ...envelopeOf(call, "chat.completion"),
    choices: [{ index: 0, message, logprobs: null, finish_reason: finishReasonOf(call) }],
    ...(usage === undefined ? {} : { usage }),
  });
}

function renderStream(call: RecordedCall): string {
  const envelope = envelopeOf(call, "chat.completion.chunk");
  const out: string[] = [];
  const send = (choices: unknown[], extra: Json = {}) =>
    out.push(sseText(JSON.stringify({ ...envelope, choices, ...extra })));
  const delta = (d: Json, finish: unknown = null) =>
    send([{ index: 0, delta: d, logprobs: null, finish_reason: finish }]);
  const kept = [...(call.end?.response?.unmapped ?? [])];
  const flushKept = (at: number) => {
    while (kept.length > 0 && (kept[0] as Unmapped).at <= at) {
      const e = (kept.shift() as Unmapped).event;
      if (!isObject(e)) continue;
      if (isObject(e.choice)) send([e.choice]);
      else if (typeof e.choice === "number") {
        send([
          {
            index: e.choice,
            delta: isObject(e.delta) ? e.delta : {},
            logprobs: e.logprobs ?? null,
            finish_reason: null,
          },
        ]);
      } else if (isObject(e.error)) {
        const { sseEvent, ...body } = e;
        out.push(
          sseText(JSON.stringify(body), typeof sseEvent === "string" ? sseEvent : undefined),
        );
      } else if (isObject(e.extra)) send([], e.extra);
    }
  };
  const field = metaOf(call).reasoning_field;
  const reasoningKey = typeof field === "string" ? field : "reasoning_content";
  const toolOrdinal = new Map<number, number>();
  delta({ role: "assistant", content: "", refusal: null });
  call.chunks.forEach((chunk, i) => {
    flushKept(i);
    switch (chunk.type) {
      case "text-delta":
        delta({ content: chunk.text });
        break;
      case "reasoning-delta":
        delta({ [reasoningKey]: chunk.text });
        break;
      case "tool-call-delta": {
        let ordinal = toolOrdinal.get(chunk.index);
        const first = ordinal === undefined;
        if (ordinal === undefined) {
          ordinal = toolOrdinal.size;
          toolOrdinal.set(chunk.index, ordinal);
        }
        const fn = first
          ? { name: chunk.name ?? "", arguments: chunk.argumentsDelta }
          : { arguments: chunk.argumentsDelta };
        delta({
          tool_calls: [
            { index: ordinal, ...(first ? { id: chunk.id, type: "function" } : {}), function: fn },
          ],
        });
        break;
      }
      case "finish":
        delta({}, finishReasonOf(call));
        break;
      default:
        break;
    }
  });
  flushKept(Number.MAX_SAFE_INTEGER);
  const usage = usageJson(call);
  if (usage !== undefined) send([], { usage });
  // A stream the provider broke off with an error ends without [DONE], as it did then.
  if (call.error === undefined) out.push("data: [DONE]\n\n");
  else if (!out.some((e) => e.includes('"error"'))) {
    out.push(
      sseText(
        JSON.stringify({ error: { message: call.error.message, code: call.error.code ?? null } }),
      ),
    );
  }
  return out.join("");
}

function errorAnswer(status: number, message: string, code: string): RenderedAnswer {
  return {
    status,
    contentType: "application/json",
    body: JSON.stringify({ error: { message, type: "seedline_proxy", param: null, code } }),
  };
}

/** OpenAI Chat Completions (`POST /v1/chat/completions`), streamed (SSE) and not. */
export const openaiChat: ProviderAdapter = {
  api: "openai-chat",
  parseRequest,
  streamMapper,
  mapJson,
  errorOf: (status, body) =>
    errorOfBody(body) ?? { message: `the upstream answered ${status}`, code: String(status) },
  render(call, stream): RenderedAnswer {
    const status = call.end?.response?.status;
    if (status !== undefined && status >= 400) {
      return {
        status,
        contentType: "application/json",
        body: JSON.stringify(
          call.end?.response?.error ?? { error: { message: call.error?.message } },
        ),
      };
    }
    if (status === undefined && call.error !== undefined) {
      return errorAnswer(502, call.error.message, call.error.code ?? "upstream_failed");
    }
    return stream
      ? { status: 200, contentType: "text/event-stream", body: renderStream(call) }
      : { status: 200, contentType: "application/json", body: renderJson(call) };
  },
  errorAnswer,
};
