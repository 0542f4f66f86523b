// A small tool-using agent on each model API's official SDK, for the proxy tests: it runs turns, calls the tools the model asks for and sends their results back.
import type { MessageParam, Tool } from "@anthropic-ai/sdk/resources/messages";
import type OpenAI from "openai";
import type {
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from "openai/resources/chat/completions";
import type { ResponseInputItem } from "openai/resources/responses/responses";
import {
  ANTHROPIC_SDK,
  type Api,
  anthropicSse,
  type FakeAnswer,
  KEY,
  OPENAI_SDK,
  openaiSse,
  type Provider,
  type Sdk,
} from "./proxy-harness.js";

/** The agent's two tools; the model may ask for others, which the agent answers as unknown. */
const TOOLS: Record<string, (args: Record<string, unknown>) => string> = {
  get_capital: (args) => (args.country === "UK" ? "London" : "unknown"),
  get_country: () => "Mexico",
};

const PARAMETERS = { type: "object", properties: { country: { type: "string" } } } as const;

/** A tool with a required parameter, in a provider-neutral form (each API's tests put it in their format). */
export const GET_CAPITAL = {
  name: "get_capital",
  description: "The capital of a country.",
  parameters: { ...PARAMETERS, required: ["country"] },
};

/** Runs the tool a call names, noting the run as `name(arguments) = result`. */
function runTool(runs: string[], name: string, args: string): string {
  const tool = TOOLS[name];
  const result = tool ? tool(JSON.parse(args || "{}")) : `error: no tool ${name}`;
  runs.push(`${name}(${args}) = ${result}`);
  return result;
}

/** What the agent did: each tool run, and each turn's final answer. */
export interface AgentRun {
  readonly runs: string[];
  readonly answers: (string | null)[];
}

export interface AgentOptions {
  readonly stream?: boolean;
  /** Called once each turn has its final answer. */
  readonly afterTurn?: () => void;
}

/** A tool-using agent on one API. */
export interface Agent {
  readonly api: Api;
  readonly provider: Provider;
  /**
   * The fake upstream's answers to {@link PROMPTS}: turn 1 a tool call, then text; turn 2 a tool
   * call (the model asks for a tool the agent lacks too, where the capture does), then text;
   * turn 3 text.
   */
  answers(): FakeAnswer[];
  /** One text answer: what a turn recorded live answers. */
  text(): FakeAnswer;
  /** Runs a turn per prompt against the API at `baseUrl` through `fetch`. */
  run(
    at: { readonly baseUrl: string; readonly fetch: typeof globalThis.fetch },
    prompts: readonly string[],
    options?: AgentOptions,
  ): Promise<AgentRun>;
  /** The newest message's content of a request the upstream received: the prompt it carried. */
  promptOf(body: Record<string, unknown>): unknown;
}

export const PROMPTS = [
  "What is the capital of the UK?",
  "Which country are we in?",
  "Thanks, summarise.",
] as const;

/** What makes the agent of one API. */
interface AgentSpec<C, S> {
  readonly api: Api;
  readonly sdk: Sdk<C>;
  /** The captures answering {@link PROMPTS} (five calls, see {@link Agent.answers}), then a text answer, read with `read`. */
  readonly captures: readonly string[];
  readonly text: string;
  readonly read: (name: string) => string;
  /** The conversation's start: what every request carries. */
  readonly begin: () => S;
  /** One turn: calls the model, runs the tools it asks for and sends their results back, until it answers. */
  readonly turn: (
    client: C,
    conversation: S,
    prompt: string,
    stream: boolean,
    runs: string[],
  ) => Promise<string | null>;
  /** The member of a request body that lists the conversation. */
  readonly history: "messages" | "input";
}

function agentOf<C, S>(spec: AgentSpec<C, S>): Agent {
  return {
    api: spec.api,
    provider: spec.sdk.provider,
    answers: () => spec.captures.map((name) => ({ sse: spec.read(name) })),
    text: () => ({ sse: spec.read(spec.text) }),
    run: async (at, prompts, options = {}) => {
      const client = spec.sdk.client(at.baseUrl, KEY, at.fetch);
      const conversation = spec.begin();
      const runs: string[] = [];
      const answers: (string | null)[] = [];
      for (const prompt of prompts) {
        answers.push(await spec.turn(client, conversation, prompt, options.stream ?? true, runs));
        options.afterTurn?.();
      }
      return { runs, answers };
    },
    promptOf: (body) => (body[spec.history] as { content: unknown }[]).at(-1)?.content,
  };
}

/** The agent's tools in a provider-neutral form. */
const DEFINITIONS = Object.keys(TOOLS).map((name) => ({ name, parameters: PARAMETERS }));

const chatAgent = agentOf({
  api: "openai-chat",
  sdk: OPENAI_SDK,
  captures: [
    "chat_tool_call_stream.sse",
    "chat_text_stream.sse",
    "chat_parallel_tool_calls_stream.sse",
    "chat_text_stream.sse",
    "chat_text_stream.sse",
  ],
  text: "chat_text_stream.sse",
  read: openaiSse,
  history: "messages",
  begin: (): ChatCompletionMessageParam[] => [{ role: "system", content: "Use the tools." }],
  turn: async (client, messages, prompt, stream, runs) => {
    const tools: ChatCompletionTool[] = DEFINITIONS.map((d) => ({ type: "function", function: d }));
    messages.push({ role: "user", content: prompt });
    for (;;) {
      const params = { model: "gpt-4o-mini", messages, tools };
      const completion = stream
        ? await client.chat.completions
            .stream({ ...params, stream: true, stream_options: { include_usage: true } })
            .finalChatCompletion()
        : await client.chat.completions.create(params);
      const message = completion.choices[0]?.message;
      if (message === undefined) throw new Error("expected a choice");
      messages.push(message);
      const calls = (message.tool_calls ?? []).flatMap((c) => (c.type === "function" ? [c] : []));
      if (calls.length === 0) return message.content;
      for (const call of calls) {
        const result = runTool(runs, call.function.name, call.function.arguments);
        messages.push({ role: "tool", tool_call_id: call.id, content: result });
      }
    }
  },
});

const responsesAgent = agentOf({
  api: "openai-responses",
  sdk: OPENAI_SDK,
  captures: [
    "responses_function_call_stream.sse",
    "responses_text_stream.sse",
    "responses_phase_function_call_stream.sse",
    "responses_text_stream.sse",
    "responses_text_stream.sse",
  ],
  text: "responses_text_stream.sse",
  read: openaiSse,
  history: "input",
  begin: (): ResponseInputItem[] => [],
  turn: async (client, input, prompt, stream, runs) => {
    const tools: OpenAI.Responses.Tool[] = DEFINITIONS.map((d) => ({
      type: "function",
      ...d,
      strict: false,
    }));
    input.push({ role: "user", content: prompt });
    for (;;) {
      const params = { model: "gpt-4o", instructions: "Use the tools.", input, tools };
      const response = stream
        ? await client.responses.stream(params).finalResponse()
        : await client.responses.create(params);
      input.push(...(response.output as ResponseInputItem[]));
      const calls = response.output.flatMap((i) => (i.type === "function_call" ? [i] : []));
      if (calls.length === 0) return response.output_text;
      for (const call of calls) {
        const output = runTool(runs, call.name, call.arguments);
        input.push({ type: "function_call_output", call_id: call.call_id, output });
      }
    }
  },
});

const messagesAgent = agentOf({
  api: "anthropic-messages",
  sdk: ANTHROPIC_SDK,
  captures: [
    "ai-sdk/anthropic-json-tool.1.chunks.txt",
    "pydantic-ai/thinking_part_stream.sse",
    "ai-sdk/anthropic-tool-no-args.chunks.txt",
    "ai-sdk/anthropic-text.chunks.txt",
    "ai-sdk/anthropic-text.chunks.txt",
  ],
  text: "ai-sdk/anthropic-text.chunks.txt",
  read: anthropicSse,
  history: "messages",
  begin: (): MessageParam[] => [],
  turn: async (client, messages, prompt, stream, runs) => {
    const tools: Tool[] = DEFINITIONS.map((d) => ({ name: d.name, input_schema: d.parameters }));
    messages.push({ role: "user", content: prompt });
    for (;;) {
      const params = {
        model: "claude-haiku-4-5",
        max_tokens: 2048,
        system: "Use the tools.",
        messages,
        tools,
      };
      const message = stream
        ? await client.messages.stream(params).finalMessage()
        : await client.messages.create(params);
      messages.push({ role: "assistant", content: message.content });
      const uses = message.content.flatMap((b) => (b.type === "tool_use" ? [b] : []));
      if (uses.length === 0) {
        return message.content.flatMap((b) => (b.type === "text" ? [b.text] : [])).join("");
      }
      messages.push({
        role: "user",
        content: uses.map((use) => ({
          type: "tool_result" as const,
          tool_use_id: use.id,
          content: runTool(runs, use.name, JSON.stringify(use.input)),
        })),
      });
    }
  },
});

/** The agent of each API. */
export const AGENTS: Record<Api, Agent> = {
  "openai-chat": chatAgent,
  "openai-responses": responsesAgent,
  "anthropic-messages": messagesAgent,
};
