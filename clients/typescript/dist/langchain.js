// @agentmem/client/langchain: agentmem as LangChain.js memory. A chat message history over
// get-context and commit-turn, and a retriever over recall. @langchain/core is a peer
// dependency of this entry point only; the core client has none.
import { BaseListChatMessageHistory } from "@langchain/core/chat_history";
import { Document } from "@langchain/core/documents";
import { AIMessage, ChatMessage, HumanMessage, SystemMessage, ToolMessage, mapStoredMessagesToChatMessages, } from "@langchain/core/messages";
import { BaseRetriever } from "@langchain/core/retrievers";
import { tool } from "@langchain/core/tools";
import { v5 as uuidv5 } from "uuid";
import { AgentMemClient } from "./client.js";
import { isAgentMemError } from "./errors.js";
import { MemoryStorage, userIdFromToken } from "./session.js";
import { TOOL_SPECS, executeTool } from "./tools.js";
import { isUUID } from "./transport.js";
/**
 * SESSION_NAMESPACE is the UUID namespace of the agentmem session ids that sessionIdFor derives
 * from LangChain session ids that are not UUIDs. It never changes: a change would move every
 * such conversation to a new, empty session.
 */
export const SESSION_NAMESPACE = "9bf34fa2-0720-4141-ac9b-5dc5e233ca72";
/**
 * sessionIdFor answers the agentmem session of a LangChain session id: a UUID is the session id
 * itself; any other string (LangChain's examples use ids such as `"foobarbaz"`) maps to the UUID
 * v5 of `<userId>` and `<sessionId>` joined by a newline, in SESSION_NAMESPACE. The user is part
 * of the name because a session belongs to the user who first commits to it: two users'
 * `"foobarbaz"` are two sessions, and the same user's is always the same one.
 */
export function sessionIdFor(userId, sessionId) {
    if (isUUID(sessionId))
        return sessionId;
    return uuidv5(`${userId}\n${sessionId}`, SESSION_NAMESPACE);
}
/**
 * AgentMemChatMessageHistory is a LangChain.js chat message history kept by agentmem:
 * getMessages reads the session's window (get-context), addMessages commits one turn
 * (commit-turn, with an Idempotency-Key), clear empties the session (sessions reset).
 *
 *   new RunnableWithMessageHistory({ runnable, getMessageHistory: (id) =>
 *     new AgentMemChatMessageHistory({ client, sessionId: id }), ... })
 */
export class AgentMemChatMessageHistory extends BaseListChatMessageHistory {
    lc_namespace = ["agentmem", "langchain", "chat_history"];
    client;
    agent;
    #sessionId;
    #session;
    #options;
    /** The format asked of get-context: `langchain`, or `raw` mapped here for servers without it. */
    #format = "langchain";
    constructor(fields) {
        super(fields);
        this.client = fields.client instanceof AgentMemClient ? fields.client : new AgentMemClient(fields.client);
        this.agent = fields.agent ?? "default";
        this.#sessionId = fields.sessionId;
        this.#options = fields;
        if (!this.#sessionId) {
            this.#session = this.client.session({
                agent: this.agent,
                storage: fields.storage ?? new MemoryStorage(),
                ...(fields.userId ? { scope: this.#scope(), userId: fields.userId } : {}),
            });
        }
    }
    /** sessionId answers the agentmem session this history reads and writes. */
    async sessionId() {
        if (this.#sessionId) {
            if (isUUID(this.#sessionId))
                return this.#sessionId;
            const userId = this.#options.userId ?? userIdFromToken(await this.client.transport.token(false, this.#options.requestOptions?.signal));
            if (!userId) {
                throw new Error(`AgentMemChatMessageHistory: sessionId ${JSON.stringify(this.#sessionId)} is not a UUID, and the token names no user (sub) to map it for; give userId, or a UUID`);
            }
            this.#sessionId = sessionIdFor(userId, this.#sessionId);
            return this.#sessionId;
        }
        return this.#session.sessionId(this.#options.requestOptions);
    }
    #scope() {
        const s = {};
        if (this.#options.userId)
            s.user_id = this.#options.userId;
        if (this.#options.tenantId !== undefined)
            s.tenant_id = this.#options.tenantId;
        return s;
    }
    async getMessages() {
        const session_id = await this.sessionId();
        const body = {
            ...this.#scope(),
            session_id,
            agent: this.agent,
            max_messages: this.#options.maxMessages ?? 100,
            ...(this.#options.maxTokens ? { max_tokens: this.#options.maxTokens } : {}),
        };
        if (this.#format === "langchain") {
            try {
                const ctx = await this.client.getContext({ ...body, format: "langchain" }, this.#options.requestOptions);
                // The server writes a missing name as null (as Python's messages_to_dict does);
                // LangChain.js leaves it out, and would keep a null as the message's name.
                const stored = ctx.messages.map((m) => m.data.name === null ? { ...m, data: { ...m.data, name: undefined } } : m);
                return mapStoredMessagesToChatMessages(stored);
            }
            catch (err) {
                // A server before contract v1.1 knows no `langchain` format: map its raw messages here.
                if (!(isAgentMemError(err) && err.status === 400 && err.fieldError("format") !== undefined))
                    throw err;
                this.#format = "raw";
            }
        }
        const ctx = await this.client.getContext({ ...body, format: "raw" }, this.#options.requestOptions);
        return ctx.messages.map(fromRaw);
    }
    async addMessage(message) {
        await this.addMessages([message]);
    }
    /** addMessages commits the messages as one turn. */
    async addMessages(messages) {
        if (messages.length === 0)
            return;
        const session_id = await this.sessionId();
        await this.client.commitTurn({ ...this.#scope(), session_id, agent: this.agent, messages: messages.map(toMessageIn) }, this.#options.requestOptions);
    }
    /** clear deletes the session's messages and keeps the session. */
    async clear() {
        const session_id = await this.sessionId();
        try {
            await this.client.sessions.reset({ ...this.#scope(), session_id }, this.#options.requestOptions);
        }
        catch (err) {
            // A session never committed to has nothing to clear.
            if (!(isAgentMemError(err) && err.status === 404))
                throw err;
        }
    }
}
/** messageType is a message's LangChain type (`human`, `ai`, ...), across @langchain/core versions. */
function messageType(m) {
    const t = m;
    return typeof t.getType === "function" ? t.getType() : t._getType();
}
/**
 * toMessageIn maps a LangChain message to one message of commit-turn. Text-only content parts
 * are joined into a string (the message's text, as the contract defines it); other parts are
 * sent as they are (contract v1.1).
 */
export function toMessageIn(m) {
    const type = messageType(m);
    const role = type === "human"
        ? "user"
        : type === "ai"
            ? "assistant"
            : type === "system"
                ? "system"
                : type === "tool"
                    ? "tool"
                    : chatRole(m);
    const out = { role, content: content(m.content) };
    if (m.name)
        out.name = m.name;
    // The message's own id (LangChain's lc_run--..., LangGraph's run-..., a UUID): the server
    // stores it once per session, so saving the whole state again duplicates nothing.
    if (typeof m.id === "string" && m.id !== "" && [...m.id].length <= 255)
        out.id = m.id;
    if (role === "assistant") {
        const calls = m.tool_calls ?? [];
        if (calls.length > 0) {
            out.tool_calls = calls.map((c, i) => ({
                id: c.id ?? `call_${i}`,
                type: "function",
                function: { name: c.name, arguments: JSON.stringify(c.args ?? {}) },
            }));
        }
    }
    if (role === "tool")
        out.tool_call_id = m.tool_call_id;
    return out;
}
function chatRole(m) {
    const role = m.role;
    return role === "assistant" || role === "system" || role === "tool" ? role : "user";
}
function content(c) {
    if (typeof c === "string")
        return c;
    if (Array.isArray(c) && c.length > 0 && c.every((p) => p.type === "text" && typeof p.text === "string")) {
        return c.map((p) => p.text).join("\n");
    }
    return c;
}
/** fromRaw maps a message of get-context's `raw` format to a LangChain message. */
export function fromRaw(m) {
    const base = {
        content: m.content,
        id: m.id,
        ...(m.name ? { name: m.name } : {}),
        additional_kwargs: {},
        response_metadata: {},
    };
    switch (m.role) {
        case "user":
            return new HumanMessage(base);
        case "system":
            return new SystemMessage(base);
        case "tool":
            return new ToolMessage({ ...base, tool_call_id: m.tool_call_id ?? "" });
        default: {
            const tool_calls = [];
            const invalid_tool_calls = [];
            for (const c of m.tool_calls ?? []) {
                try {
                    const args = JSON.parse(c.function.arguments || "{}");
                    if (args === null || typeof args !== "object" || Array.isArray(args))
                        throw new Error("not an object");
                    tool_calls.push({ name: c.function.name, args: args, id: c.id, type: "tool_call" });
                }
                catch {
                    invalid_tool_calls.push({ name: c.function.name, args: c.function.arguments ?? "", id: c.id, error: "arguments are not a JSON object", type: "invalid_tool_call" });
                }
            }
            return new AIMessage({ ...base, tool_calls, invalid_tool_calls });
        }
    }
}
/**
 * AgentMemRetriever is a LangChain.js retriever over recall: each memory (or message) found is a
 * Document (`pageContent` the memory, `metadata` its metadata with `id`, `score` and
 * `created_at`, and `shared: true` for a shared memory of the tenant), best first.
 */
export class AgentMemRetriever extends BaseRetriever {
    static lc_name() {
        return "AgentMemRetriever";
    }
    lc_namespace = ["agentmem", "langchain", "retrievers"];
    client;
    #options;
    constructor(fields) {
        super(fields);
        this.client = fields.client instanceof AgentMemClient ? fields.client : new AgentMemClient(fields.client);
        this.#options = fields;
    }
    async _getRelevantDocuments(query) {
        const o = this.#options;
        const body = { query, k: o.k ?? 5 };
        if (o.agent)
            body.agent = o.agent;
        if (o.mode)
            body.mode = o.mode;
        if (o.filter)
            body.filter = o.filter;
        if (o.minScore !== undefined)
            body.min_score = o.minScore;
        if (o.source)
            body.source = o.source;
        if (o.includeShared !== undefined)
            body.include_shared = o.includeShared;
        if (o.userId)
            body.user_id = o.userId;
        if (o.tenantId !== undefined)
            body.tenant_id = o.tenantId;
        const { results } = await this.client.recall(body, o.requestOptions);
        return results.map((h) => new Document({
            pageContent: h.content,
            id: h.id,
            metadata: {
                ...h.metadata,
                id: h.id,
                score: h.score,
                created_at: h.created_at,
                ...(h.source ? { source: h.source } : {}),
                ...(h.shared ? { shared: true } : {}),
                ...(h.session_id ? { session_id: h.session_id, seq: h.seq, role: h.role } : {}),
            },
        }));
    }
}
/**
 * agentmemTools gives agentmem's memory tools as LangChain tools (`tool()` of
 * @langchain/core/tools), for `bindTools` and agents. Each runs executeTool and answers the
 * model its text: the tool's structured answer, or the problem it can act on, as JSON.
 */
export function agentmemTools(client, input = {}) {
    const am = client instanceof AgentMemClient ? client : new AgentMemClient(client);
    const { tools: names, ...options } = input;
    return TOOL_SPECS.filter((t) => !names || names.includes(t.name)).map((t) => tool(async (args) => (await executeTool(am, t.name, args, options)).text, {
        name: t.name,
        description: t.description,
        schema: t.inputSchema,
    }));
}
