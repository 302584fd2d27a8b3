import { AgentMemError } from "./errors.js";
import { TOOL_SPECS } from "./tool-definitions.js";
import { uuid } from "./transport.js";
export { TOOL_SPECS };
function pick(names) {
    if (!names)
        return TOOL_SPECS;
    for (const n of names)
        if (!isToolName(n))
            throw new TypeError(`agentmem: no tool named ${String(n)}`);
    return TOOL_SPECS.filter((t) => names.includes(t.name));
}
/** isToolName tells whether name is one of agentmem's tools. */
export function isToolName(name) {
    return TOOL_SPECS.some((t) => t.name === name);
}
/** openaiTools gives the tools for OpenAI's Chat Completions API. */
export function openaiTools(names) {
    return pick(names).map((t) => ({
        type: "function",
        function: { name: t.name, description: t.description, parameters: t.inputSchema, strict: false },
    }));
}
/** openaiResponsesTools gives the tools for OpenAI's Responses API. */
export function openaiResponsesTools(names) {
    return pick(names).map((t) => ({
        type: "function",
        name: t.name,
        description: t.description,
        parameters: t.inputSchema,
        strict: false,
    }));
}
/** anthropicTools gives the tools for Anthropic's Messages API. */
export function anthropicTools(names) {
    return pick(names).map((t) => ({ name: t.name, description: t.description, input_schema: t.inputSchema }));
}
/** The MCP protocol version the executor speaks; the mcp function is stateless, so no initialize. */
const PROTOCOL_VERSION = "2025-06-18";
function invalid(name, detail, field) {
    const error = { code: "invalid_request", status: 400, detail };
    if (field)
        error.errors = [{ field, message: detail }];
    return { ok: false, name, error, text: JSON.stringify(error) };
}
/**
 * executeTool runs one tool call of a model against agentmem and gives what to answer the model:
 * `text` (the structured answer, or the problem, as JSON). `args` is the call's arguments as an
 * object or as the JSON text OpenAI gives. A problem the model can act on (unknown tool,
 * invalid arguments, not found, a limit) is a result with `ok: false`; an authentication
 * failure, a refusal or a server fault throws an AgentMemError, as the client's functions do.
 */
export async function executeTool(client, name, args, options = {}) {
    const spec = TOOL_SPECS.find((t) => t.name === name);
    if (!spec)
        return invalid(name, `no tool named ${name}; the tools are ${TOOL_SPECS.map((t) => t.name).join(", ")}`);
    let input = args ?? {};
    if (typeof input === "string") {
        try {
            input = input.trim() === "" ? {} : JSON.parse(input);
        }
        catch {
            return invalid(name, "the arguments are not valid JSON");
        }
    }
    if (typeof input !== "object" || input === null || Array.isArray(input)) {
        return invalid(name, "the arguments must be a JSON object");
    }
    const a = { ...input };
    const { userId, tenantId, agent, ...request } = options;
    if (userId !== undefined)
        a.user_id = userId;
    if (tenantId !== undefined)
        a.tenant_id = tenantId;
    if (agent !== undefined && "agent" in spec.inputSchema.properties && a.agent === undefined)
        a.agent = agent;
    const res = await client.transport.call({
        fn: "mcp",
        body: { jsonrpc: "2.0", id: uuid(), method: "tools/call", params: { name, arguments: a } },
        // A retry after a lost answer is safe only for the tools that say so.
        repeatable: spec.annotations.idempotentHint,
    }, {
        ...request,
        headers: { Accept: "application/json, text/event-stream", "MCP-Protocol-Version": PROTOCOL_VERSION, ...request.headers },
    });
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
        let error;
        try {
            error = JSON.parse(text);
        }
        catch {
            error = { code: "invalid_request", status: 400, detail: text };
        }
        return { ok: false, name, error, text };
    }
    const output = body?.result?.structuredContent ?? {};
    return { ok: true, name: spec.name, output, text: JSON.stringify(output) };
}
/**
 * runOpenAIToolCalls runs a Chat Completions answer's tool calls of agentmem's tools, in order,
 * and gives the `tool` messages that answer them (for the next request's messages).
 */
export async function runOpenAIToolCalls(client, toolCalls, options) {
    const out = [];
    for (const call of toolCalls) {
        const r = await executeTool(client, call.function.name, call.function.arguments, options);
        out.push({ role: "tool", tool_call_id: call.id, content: r.text });
    }
    return out;
}
/**
 * runAnthropicToolUses runs the `tool_use` blocks of an assistant message (other blocks are
 * skipped) and gives the `tool_result` blocks of the user message that answers them.
 */
export async function runAnthropicToolUses(client, content, options) {
    const out = [];
    for (const block of content) {
        if (block.type !== "tool_use" || !block.id || !block.name)
            continue;
        const r = await executeTool(client, block.name, block.input, options);
        out.push({ type: "tool_result", tool_use_id: block.id, content: r.text, is_error: !r.ok });
    }
    return out;
}
