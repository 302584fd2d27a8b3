// @agentmem/client: the agentmem HTTP API over fetch, for browsers, Node 18+ and edge runtimes.
export { AgentMemClient, ChatSession, FUNCTIONS } from "./client.js";
export { AgentMemError, isAgentMemError } from "./errors.js";
export { MemoryStorage, defaultStorage, sessionKey, userIdFromToken } from "./session.js";
export { StreamAccumulator, StreamCommit } from "./stream.js";
export { supabaseToken } from "./supabase.js";
export { POSITION_HEADER, Transport, isPosition, isUUID, parseRetryAfter, uuid } from "./transport.js";
export { TOOL_SPECS, anthropicTools, executeTool, isToolName, openaiResponsesTools, openaiTools, runAnthropicToolUses, runOpenAIToolCalls, } from "./tools.js";
