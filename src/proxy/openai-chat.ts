// The OpenAI Chat Completions adapter: requests to neutral form, SSE and JSON responses to stream chunks, and back.
import { mapJson, streamMapper } from "./openai-chat-map.js";
import { openaiErrors, renderJson, renderStream } from "./openai-chat-render.js";
import { parseRequest } from "./openai-chat-request.js";
import { jsonAnswer, providerAdapter } from "./recorded-failure.js";

/** OpenAI Chat Completions (`POST /v1/chat/completions`), streamed (SSE) and not. */
export const openaiChat = providerAdapter({
  api: "openai-chat",
  parseRequest,
  streamMapper,
  mapJson,
  ...openaiErrors,
  renderStream,
  renderWhole: (call) => jsonAnswer(renderJson(call)),
});
