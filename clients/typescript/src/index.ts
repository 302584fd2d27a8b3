// @agentmem/client: the agentmem HTTP API over fetch, for browsers, Node 18+ and edge runtimes.
export { AgentMemClient, ChatSession, FUNCTIONS } from "./client.js";
export type { ChatSessionOptions, ClientOptions, SessionInfo } from "./client.js";
export { AgentMemError, isAgentMemError } from "./errors.js";
export type { ClientErrorCode, FieldError, Problem, ServerErrorCode } from "./errors.js";
export { MemoryStorage, defaultStorage, sessionKey, userIdFromToken } from "./session.js";
export type { SessionStorage } from "./session.js";
export { StreamAccumulator, StreamCommit } from "./stream.js";
export type { StreamCommitOptions } from "./stream.js";
export { supabaseToken } from "./supabase.js";
export type { SupabaseLike } from "./supabase.js";
export { POSITION_HEADER, Transport, isPosition, isUUID, parseRetryAfter, uuid } from "./transport.js";
export type { ApiResponse, RequestOptions, TokenGetter, TransportOptions } from "./transport.js";
export type * from "./types.js";
export type { components, paths, operations } from "./generated/openapi.js";
export {
  TOOL_SPECS,
  anthropicTools,
  executeTool,
  isToolName,
  openaiResponsesTools,
  openaiTools,
  runAnthropicToolUses,
  runOpenAIToolCalls,
  type AnthropicTool,
  type AnthropicToolUse,
  type JsonObjectSchema,
  type OpenAIChatTool,
  type OpenAIResponsesTool,
  type OpenAIToolCall,
  type ToolExecuteOptions,
  type ToolName,
  type ToolProblem,
  type ToolResult,
  type ToolSelection,
  type ToolSpec,
} from "./tools.js";
