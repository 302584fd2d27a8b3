import type { AgentMemClient } from "./client.js";
import { TOOL_SPECS, type JsonObjectSchema, type ToolName, type ToolSpec } from "./tool-definitions.js";
import { type RequestOptions } from "./transport.js";
export { TOOL_SPECS, type JsonObjectSchema, type ToolName, type ToolSpec };
/** ToolSelection picks tools by name; default every tool. */
export type ToolSelection = readonly ToolName[] | undefined;
/** isToolName tells whether name is one of agentmem's tools. */
export declare function isToolName(name: unknown): name is ToolName;
/** OpenAIChatTool is a tool of OpenAI's Chat Completions API (`tools` of a request). */
export interface OpenAIChatTool {
    type: "function";
    function: {
        name: ToolName;
        description: string;
        parameters: JsonObjectSchema;
        strict?: boolean | null;
    };
}
/** openaiTools gives the tools for OpenAI's Chat Completions API. */
export declare function openaiTools(names?: ToolSelection): OpenAIChatTool[];
/** OpenAIResponsesTool is a function tool of OpenAI's Responses API. */
export interface OpenAIResponsesTool {
    type: "function";
    name: ToolName;
    description: string;
    parameters: JsonObjectSchema;
    strict: boolean | null;
}
/** openaiResponsesTools gives the tools for OpenAI's Responses API. */
export declare function openaiResponsesTools(names?: ToolSelection): OpenAIResponsesTool[];
/** AnthropicTool is a client tool of Anthropic's Messages API. */
export interface AnthropicTool {
    name: ToolName;
    description: string;
    input_schema: JsonObjectSchema;
}
/** anthropicTools gives the tools for Anthropic's Messages API. */
export declare function anthropicTools(names?: ToolSelection): AnthropicTool[];
/** ToolExecuteOptions says whom a tool call acts for, and tunes the request. */
export interface ToolExecuteOptions extends RequestOptions {
    /** For service callers: the user (and tenant) to act for; a user token acts as its user. */
    userId?: string;
    tenantId?: string;
    /** The agent of tools that take one, when the model names none (default `default`). */
    agent?: string;
}
/** ToolProblem is a tool error: a problem the model can act on (invalid arguments, not found, a limit). */
export interface ToolProblem {
    code: string;
    status: number;
    detail: string;
    errors?: {
        field: string;
        message: string;
    }[];
    retry_after?: number;
    request_id?: string;
}
/** ToolResult is the outcome of one tool call. */
export type ToolResult = {
    ok: true;
    name: ToolName;
    output: Record<string, unknown>;
    text: string;
} | {
    ok: false;
    name: string;
    error: ToolProblem;
    text: string;
};
/**
 * executeTool runs one tool call of a model against agentmem and gives what to answer the model:
 * `text` (the structured answer, or the problem, as JSON). `args` is the call's arguments as an
 * object or as the JSON text OpenAI gives. A problem the model can act on (unknown tool,
 * invalid arguments, not found, a limit) is a result with `ok: false`; an authentication
 * failure, a refusal or a server fault throws an AgentMemError, as the client's functions do.
 */
export declare function executeTool(client: AgentMemClient, name: string, args: unknown, options?: ToolExecuteOptions): Promise<ToolResult>;
/** OpenAIToolCall is the part of a Chat Completions tool call the executor reads. */
export interface OpenAIToolCall {
    id: string;
    type?: string;
    function: {
        name: string;
        arguments: string;
    };
}
/**
 * runOpenAIToolCalls runs a Chat Completions answer's tool calls of agentmem's tools, in order,
 * and gives the `tool` messages that answer them (for the next request's messages).
 */
export declare function runOpenAIToolCalls(client: AgentMemClient, toolCalls: readonly OpenAIToolCall[], options?: ToolExecuteOptions): Promise<{
    role: "tool";
    tool_call_id: string;
    content: string;
}[]>;
/** AnthropicToolUse is the part of a Messages API `tool_use` block the executor reads. */
export interface AnthropicToolUse {
    type: string;
    id?: string;
    name?: string;
    input?: unknown;
}
/**
 * runAnthropicToolUses runs the `tool_use` blocks of an assistant message (other blocks are
 * skipped) and gives the `tool_result` blocks of the user message that answers them.
 */
export declare function runAnthropicToolUses(client: AgentMemClient, content: readonly AnthropicToolUse[], options?: ToolExecuteOptions): Promise<{
    type: "tool_result";
    tool_use_id: string;
    content: string;
    is_error: boolean;
}[]>;
