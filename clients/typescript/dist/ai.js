// @agentmem/client/ai: agentmem for the Vercel AI SDK (the `ai` package, v7). Memory tools
// for generateText and streamText, conversion between the SDK's model and UI messages and
// agentmem's messages (content parts and tool calls included), the session's window as model
// messages before a call, and an onFinish that commits the finished turn idempotently. `ai` is
// a peer dependency of this entry point only.
import { convertToModelMessages, jsonSchema, tool, } from "ai";
import { AgentMemClient } from "./client.js";
import { TOOL_SPECS, executeTool } from "./tools.js";
import { uuid } from "./transport.js";
function clientOf(client) {
    return client instanceof AgentMemClient ? client : new AgentMemClient(client);
}
/**
 * memoryTools gives agentmem's memory tools for generateText and streamText (`tools`). Each
 * runs executeTool: its output is the tool's structured answer, or `{error}` with the problem
 * a model can act on (invalid arguments, not found, a limit).
 */
export function memoryTools(client, options = {}) {
    const am = clientOf(client);
    const { tools: names, ...exec } = options;
    const set = {};
    for (const spec of TOOL_SPECS) {
        if (names && !names.includes(spec.name))
            continue;
        set[spec.name] = tool({
            title: spec.title,
            description: spec.description,
            inputSchema: jsonSchema(spec.inputSchema),
            execute: async (input, { abortSignal }) => {
                const r = await executeTool(am, spec.name, input, { ...exec, signal: abortSignal ?? exec.signal });
                return r.ok ? r.output : { error: r.error };
            },
        });
    }
    return set;
}
/** dataURL is a part's data as a URL string: as given when it is one, else a base64 data URL. */
function dataURL(data, mediaType) {
    if (data instanceof URL)
        return data.href;
    // ai 7's tagged file data: {type: "data" | "url" | "text", ...}.
    const tagged = data;
    if (typeof tagged === "object" && typeof tagged.type === "string") {
        if (tagged.type === "data" && tagged.data !== undefined)
            return dataURL(tagged.data, mediaType);
        if (tagged.type === "url" && tagged.url !== undefined)
            return dataURL(tagged.url, mediaType);
        if (tagged.type === "text")
            return dataURL(new TextEncoder().encode(tagged.text ?? ""), mediaType ?? "text/plain");
    }
    if (typeof data === "string") {
        if (/^(https?|data):/i.test(data))
            return data;
        return `data:${mediaType ?? "application/octet-stream"};base64,${data}`;
    }
    const bytes = data instanceof Uint8Array ? data : data instanceof ArrayBuffer ? new Uint8Array(data) : undefined;
    if (!bytes)
        return String(data);
    let bin = "";
    for (const b of bytes)
        bin += String.fromCharCode(b);
    return `data:${mediaType ?? "application/octet-stream"};base64,${btoa(bin)}`;
}
/** mediaTypeOf reads the media type of a data URL. */
function mediaTypeOf(url) {
    return /^data:([^;,]+)/i.exec(url)?.[1];
}
/** userParts converts the parts of a user or system model message into agentmem's content parts. */
function userParts(parts) {
    const out = [];
    for (const p of parts) {
        if (p.type === "text")
            out.push({ type: "text", text: String(p.text) });
        else if (p.type === "image") {
            out.push({ type: "image_url", image_url: { url: dataURL(p.image, p.mediaType) } });
        }
        else if (p.type === "file") {
            const url = dataURL(p.data, p.mediaType);
            if (p.mediaType?.startsWith("image/"))
                out.push({ type: "image_url", image_url: { url } });
            else
                out.push({ type: "file", file: { file_data: url, ...(p.filename ? { filename: String(p.filename) } : {}) } });
        }
    }
    return out;
}
/** toolOutputText is a tool result's output as the text agentmem stores. */
function toolOutputText(output) {
    const o = output;
    switch (o?.type) {
        case "text":
        case "error-text":
            return String(o.value);
        case "json":
        case "error-json":
        case "content":
            return JSON.stringify(o.value);
        case "execution-denied":
            return JSON.stringify({ denied: true, reason: o.reason ?? null });
    }
    return JSON.stringify(output ?? null);
}
/**
 * fromModelMessages converts the AI SDK's model messages into agentmem's messages for
 * commit-turn: text and content parts (images and files as data URLs or links), an
 * assistant's tool calls as `tool_calls`, and each tool result as a `tool` message. Reasoning
 * is not stored.
 */
export function fromModelMessages(messages) {
    const out = [];
    for (const m of messages) {
        if (m.role === "system") {
            out.push({ role: "system", content: m.content });
        }
        else if (m.role === "user") {
            if (typeof m.content === "string")
                out.push({ role: "user", content: m.content });
            else {
                const parts = userParts(m.content);
                const onlyText = parts.every((p) => p.type === "text");
                out.push({
                    role: "user",
                    content: onlyText ? parts.map((p) => p.text).join("\n") : parts,
                });
            }
        }
        else if (m.role === "assistant") {
            if (typeof m.content === "string") {
                out.push({ role: "assistant", content: m.content });
                continue;
            }
            const texts = [];
            const calls = [];
            for (const p of m.content) {
                if (p.type === "text")
                    texts.push(String(p.text));
                else if (p.type === "tool-call" && !p.providerExecuted) {
                    calls.push({
                        id: String(p.toolCallId),
                        type: "function",
                        function: { name: String(p.toolName), arguments: JSON.stringify(p.input ?? {}) },
                    });
                }
            }
            const msg = { role: "assistant", content: texts.join("") };
            if (calls.length > 0)
                msg.tool_calls = calls;
            if (msg.content !== "" || calls.length > 0)
                out.push(msg);
        }
        else if (m.role === "tool") {
            for (const p of m.content) {
                if (p.type !== "tool-result")
                    continue;
                out.push({ role: "tool", tool_call_id: String(p.toolCallId), content: toolOutputText(p.output) });
            }
        }
    }
    return out;
}
/** fromUIMessages converts the AI SDK's UI messages (useChat's) into agentmem's messages. */
export async function fromUIMessages(messages) {
    return fromModelMessages(await convertToModelMessages([...messages]));
}
/** textOf is a stored message's text: its string, or its text parts joined by newlines. */
function textOf(content) {
    if (typeof content === "string")
        return content;
    return content
        .filter((p) => p.type === "text")
        .map((p) => String(p.text ?? ""))
        .join("\n");
}
/** parseJSON parses a tool's stored output, keeping text that is not JSON as it is. */
function parseJSON(s) {
    try {
        return { json: true, value: JSON.parse(s) };
    }
    catch {
        return { json: false };
    }
}
/** modelUserContent converts agentmem's content into a model message's user content. */
function modelUserContent(content) {
    if (typeof content === "string")
        return content;
    const parts = [];
    for (const p of content) {
        if (p.type === "text")
            parts.push({ type: "text", text: String(p.text) });
        else if (p.type === "image_url") {
            const url = String(p.image_url.url);
            const mediaType = mediaTypeOf(url);
            parts.push({ type: "image", image: new URL(url), ...(mediaType ? { mediaType } : {}) });
        }
        else if (p.type === "file") {
            const f = p.file;
            if (!f.file_data)
                continue;
            parts.push({
                type: "file",
                data: new URL(f.file_data),
                mediaType: mediaTypeOf(f.file_data) ?? "application/octet-stream",
                ...(f.filename ? { filename: f.filename } : {}),
            });
        }
    }
    return parts;
}
/**
 * toModelMessages converts agentmem's stored messages (get-context `raw`, sessions
 * `history`) into the AI SDK's model messages: tool calls as `tool-call` parts, each run of
 * tool messages as one `tool` message of `tool-result` parts (JSON output when the stored
 * text is JSON), images and files as parts.
 */
export function toModelMessages(messages) {
    const out = [];
    const toolNames = new Map();
    for (const m of messages) {
        if (m.role === "system")
            out.push({ role: "system", content: textOf(m.content) });
        else if (m.role === "user")
            out.push({ role: "user", content: modelUserContent(m.content) });
        else if (m.role === "assistant") {
            const calls = m.tool_calls ?? [];
            const text = textOf(m.content);
            if (calls.length === 0) {
                out.push({ role: "assistant", content: text });
                continue;
            }
            const parts = [];
            if (text !== "")
                parts.push({ type: "text", text });
            for (const c of calls) {
                toolNames.set(c.id, c.function.name);
                const args = parseJSON(c.function.arguments ?? "");
                parts.push({ type: "tool-call", toolCallId: c.id, toolName: c.function.name, input: args.json ? args.value : c.function.arguments });
            }
            out.push({ role: "assistant", content: parts });
        }
        else if (m.role === "tool") {
            const id = m.tool_call_id ?? "";
            const text = textOf(m.content);
            const parsed = parseJSON(text);
            const part = {
                type: "tool-result",
                toolCallId: id,
                toolName: toolNames.get(id) ?? m.name ?? "tool",
                output: parsed.json ? { type: "json", value: parsed.value } : { type: "text", value: text },
            };
            const last = out[out.length - 1];
            if (last?.role === "tool")
                last.content.push(part);
            else
                out.push({ role: "tool", content: [part] });
        }
    }
    return out;
}
/**
 * toUIMessages converts agentmem's stored messages into UI messages (for useChat's initial
 * messages): text and file parts, and an assistant's tool calls with their results as
 * `dynamic-tool` parts of the same message.
 */
export function toUIMessages(messages) {
    const out = [];
    const pending = new Map();
    for (const m of messages) {
        if (m.role === "tool") {
            const p = pending.get(m.tool_call_id ?? "");
            if (p) {
                const text = textOf(m.content);
                const parsed = parseJSON(text);
                p.state = "output-available";
                p.output = parsed.json ? parsed.value : text;
            }
            continue;
        }
        // Each stored assistant message is one step of an answer.
        const parts = m.role === "assistant" ? [{ type: "step-start" }] : [];
        const text = textOf(m.content);
        if (text !== "")
            parts.push({ type: "text", text });
        if (typeof m.content !== "string") {
            for (const p of m.content) {
                if (p.type === "image_url") {
                    const url = String(p.image_url.url);
                    parts.push({ type: "file", url, mediaType: mediaTypeOf(url) ?? "image/*" });
                }
                else if (p.type === "file") {
                    const f = p.file;
                    if (f.file_data) {
                        parts.push({ type: "file", url: f.file_data, mediaType: mediaTypeOf(f.file_data) ?? "application/octet-stream", ...(f.filename ? { filename: f.filename } : {}) });
                    }
                }
            }
        }
        for (const c of m.tool_calls ?? []) {
            const args = parseJSON(c.function.arguments ?? "");
            const part = { type: "dynamic-tool", toolCallId: c.id, toolName: c.function.name, input: args.json ? args.value : c.function.arguments, state: "input-available" };
            pending.set(c.id, part);
            parts.push(part);
        }
        const role = m.role === "system" ? "system" : m.role === "user" ? "user" : "assistant";
        const prev = out[out.length - 1];
        // The SDK keeps one assistant UI message per answer, its steps' tool calls and text together.
        if (role === "assistant" && prev?.role === "assistant")
            prev.parts.push(...parts);
        else
            out.push({ id: m.id, role, parts });
    }
    return out;
}
function scope(o) {
    const s = {};
    if (o.userId)
        s.user_id = o.userId;
    if (o.tenantId)
        s.tenant_id = o.tenantId;
    return s;
}
/**
 * loadMessages reads the session's window (get-context, tool calls kept with their results)
 * as model messages, to put before the new ones of a call.
 */
export async function loadMessages(client, o, opts) {
    const ctx = await clientOf(client).getContext({
        ...scope(o),
        session_id: o.sessionId,
        ...(o.agent ? { agent: o.agent } : {}),
        ...(o.maxMessages ? { max_messages: o.maxMessages } : {}),
        ...(o.maxTokens ? { max_tokens: o.maxTokens } : {}),
    }, opts);
    return toModelMessages(ctx.messages);
}
/**
 * commitOnFinish gives an onFinish for generateText and streamText that commits the turn (the
 * input messages, then the model's answer with its tool calls and results) to the session,
 * with an Idempotency-Key that every delivery of the same call's event reuses: however often
 * the event is delivered, the turn is stored once.
 */
export function commitOnFinish(client, o) {
    const am = clientOf(client);
    let fallbackKey;
    return async (event) => {
        const answer = event.responseMessages ?? event.response?.messages ?? [];
        const messages = [...fromModelMessages(o.input), ...fromModelMessages(answer)];
        if (messages.length === 0)
            return;
        fallbackKey ??= `ai-sdk:${o.sessionId}:${uuid()}`;
        const key = o.idempotencyKey ?? (event.callId ? `ai-sdk:${o.sessionId}:${event.callId}` : fallbackKey);
        try {
            await am.commitTurn({ ...scope(o), session_id: o.sessionId, ...(o.agent ? { agent: o.agent } : {}), messages }, { idempotencyKey: key });
        }
        catch (err) {
            if (!o.onError)
                throw err;
            o.onError(err);
        }
    };
}
