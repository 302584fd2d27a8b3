// agentmem's memory tools for function calling: the tools of the mcp function, as OpenAI's and
// Anthropic's APIs take tool definitions, and one executor that runs a model's tool call
// against agentmem (through the mcp function, so validation, limits and errors are the
// server's own). The schemas come from tool-definitions.ts, generated from the server's tools.
import type { AgentMemClient } from "./client.js";
import { AgentMemError } from "./errors.js";
import { TOOL_SPECS, type JsonObjectSchema, type ToolName, type ToolSpec } from "./tool-definitions.js";
import { uuid, type RequestOptions } from "./transport.js";

export { TOOL_SPECS, type JsonObjectSchema, type ToolName, type ToolSpec };

/** ToolSelection picks tools by name; default every tool. */
export type ToolSelection = readonly ToolName[] | undefined;

function pick(names: ToolSelection): readonly ToolSpec[] {
  if (!names) return TOOL_SPECS;
  for (const n of names) if (!isToolName(n)) throw new TypeError(`agentmem: no tool named ${String(n)}`);
  return TOOL_SPECS.filter((t) => names.includes(t.name));
}

/** isToolName tells whether name is one of agentmem's tools. */
export function isToolName(name: unknown): name is ToolName {
  return TOOL_SPECS.some((t) => t.name === name);
}

/** OpenAIChatTool is a tool of OpenAI's Chat Completions API (`tools` of a request). */
export interface OpenAIChatTool {
  type: "function";
  function: { name: ToolName; description: string; parameters: JsonObjectSchema; strict?: boolean | null };
}

/** openaiTools gives the tools for OpenAI's Chat Completions API. */
export function openaiTools(names?: ToolSelection): OpenAIChatTool[] {
  return pick(names).map((t) => ({
    type: "function",
    function: { name: t.name, description: t.description, parameters: t.inputSchema, strict: false },
  }));
}

/** OpenAIResponsesTool is a function tool of OpenAI's Responses API. */
export interface OpenAIResponsesTool {
  type: "function";
  name: ToolName;
  description: string;
  parameters: JsonObjectSchema;
  strict: boolean | null;
}

/** openaiResponsesTools gives the tools for OpenAI's Responses API. */
export function openaiResponsesTools(names?: ToolSelection): OpenAIResponsesTool[] {
  return pick(names).map((t) => ({
    type: "function",
    name: t.name,
    description: t.description,
    parameters: t.inputSchema,
    strict: false,
  }));
}

/** AnthropicTool is a client tool of Anthropic's Messages API. */
export interface AnthropicTool {
  name: ToolName;
  description: string;
  input_schema: JsonObjectSchema;
}

/** anthropicTools gives the tools for Anthropic's Messages API. */
export function anthropicTools(names?: ToolSelection): AnthropicTool[] {
  return pick(names).map((t) => ({ name: t.name, description: t.description, input_schema: t.inputSchema }));
}

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
  errors?: { field: string; message: string }[];
  retry_after?: number;
  request_id?: string;
}

/** ToolResult is the outcome of one tool call. */
export type ToolResult =
  | { ok: true; name: ToolName; output: Record<string, unknown>; text: string }
  | { ok: false; name: string; error: ToolProblem; text: string };

/** The MCP protocol version the executor speaks; the mcp function is stateless, so no initialize. */
const PROTOCOL_VERSION = "2025-06-18";

interface JsonRpcAnswer {
  result?: {
    isError?: boolean;
    content?: { type: string; text?: string }[];
    structuredContent?: Record<string, unknown>;
  };
  error?: { code: number; message: string; data?: Partial<ToolProblem> };
}

function invalid(name: string, detail: string, field?: string): ToolResult {
  const error: ToolProblem = { code: "invalid_request", status: 400, detail };
  if (field) error.errors = [{ field, message: detail }];
  return { ok: false, name, error, text: JSON.stringify(error) };
}

/**
 * executeTool runs one tool call of a model against agentmem and gives what to answer the model:
 * `text` (the structured answer, or the problem, as JSON). `args` is the call's arguments as an
 * object or as the JSON text OpenAI gives. A problem the model can act on (unknown tool,
 * invalid arguments, not found, a limit) is a result with `ok: false`; an authentication
 * failure, a refusal or a server fault throws an AgentMemError, as the client's functions do.
 */
export async function executeTool(
  client: AgentMemClient,
  name: string,
  args: unknown,
  options: ToolExecuteOptions = {},
): Promise<ToolResult> {
  const spec = TOOL_SPECS.find((t) => t.name === name);
  if (!spec) return invalid(name, `no tool named ${name}; the tools are ${TOOL_SPECS.map((t) => t.name).join(", ")}`);
  let input: unknown = args ?? {};
  if (typeof input === "string") {
    try {
      input = input.trim() === "" ? {} : JSON.parse(input);
    } catch {
      return invalid(name, "the arguments are not valid JSON");
    }
  }
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    return invalid(name, "the arguments must be a JSON object");
  }
  const a: Record<string, unknown> = { ...(input as Record<string, unknown>) };
  const { userId, tenantId, agent, ...request } = options;
  if (userId !== undefined) a.user_id = userId;
  if (tenantId !== undefined) a.tenant_id = tenantId;
  if (agent !== undefined && "agent" in spec.inputSchema.properties && a.agent === undefined) a.agent = agent;

  const res = await client.transport.call<JsonRpcAnswer>(
    {
      fn: "mcp",
      body: { jsonrpc: "2.0", id: uuid(), method: "tools/call", params: { name, arguments: a } },
      // A retry after a lost answer is safe only for the tools that say so.
      repeatable: spec.annotations.idempotentHint,
    },
    {
      ...request,
      headers: { Accept: "application/json, text/event-stream", "MCP-Protocol-Version": PROTOCOL_VERSION, ...request.headers },
    },
  );
  const body = res.data;
  if (body?.error) {
    const d = body.error.data ?? {};
    throw new AgentMemError({
      status: d.status ?? 500,
      code: d.code ?? "internal",
      detail: d.detail ?? body.error.message,
      requestId: d.request_id ?? res.requestId,
      retryAfter: d.retry_after,
      fn: "mcp",
    });
  }
  const text = body?.result?.content?.find((c) => c.type === "text")?.text ?? "";
  if (body?.result?.isError) {
    let error: ToolProblem;
    try {
      error = JSON.parse(text) as ToolProblem;
    } catch {
      error = { code: "invalid_request", status: 400, detail: text };
    }
    return { ok: false, name, error, text };
  }
  const output = body?.result?.structuredContent ?? {};
  return { ok: true, name: spec.name, output, text: JSON.stringify(output) };
}

/** OpenAIToolCall is the part of a Chat Completions tool call the executor reads. */
export interface OpenAIToolCall {
  id: string;
  type?: string;
  function: { name: string; arguments: string };
}

/**
 * runOpenAIToolCalls runs a Chat Completions answer's tool calls of agentmem's tools, in order,
 * and gives the `tool` messages that answer them (for the next request's messages).
 */
export async function runOpenAIToolCalls(
  client: AgentMemClient,
  toolCalls: readonly OpenAIToolCall[],
  options?: ToolExecuteOptions,
): Promise<{ role: "tool"; tool_call_id: string; content: string }[]> {
  const out: { role: "tool"; tool_call_id: string; content: string }[] = [];
  for (const call of toolCalls) {
    const r = await executeTool(client, call.function.name, call.function.arguments, options);
    out.push({ role: "tool", tool_call_id: call.id, content: r.text });
  }
  return out;
}

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
export async function runAnthropicToolUses(
  client: AgentMemClient,
  content: readonly AnthropicToolUse[],
  options?: ToolExecuteOptions,
): Promise<{ type: "tool_result"; tool_use_id: string; content: string; is_error: boolean }[]> {
  const out: { type: "tool_result"; tool_use_id: string; content: string; is_error: boolean }[] = [];
  for (const block of content) {
    if (block.type !== "tool_use" || !block.id || !block.name) continue;
    const r = await executeTool(client, block.name, block.input, options);
    out.push({ type: "tool_result", tool_use_id: block.id, content: r.text, is_error: !r.ok });
  }
  return out;
}
