// @agentmem/client/langchain: agentmem as LangChain.js memory. A chat message history over
// get-context and commit-turn, and a retriever over recall. @langchain/core is a peer
// dependency of this entry point only; the core client has none.
import { BaseListChatMessageHistory } from "@langchain/core/chat_history";
import { Document } from "@langchain/core/documents";
import {
  AIMessage,
  ChatMessage,
  HumanMessage,
  SystemMessage,
  ToolMessage,
  mapStoredMessagesToChatMessages,
  type BaseMessage,
  type StoredMessage,
} from "@langchain/core/messages";
import { BaseRetriever, type BaseRetrieverInput } from "@langchain/core/retrievers";
import { tool } from "@langchain/core/tools";
import { v5 as uuidv5 } from "uuid";

import { AgentMemClient, type ChatSession, type ClientOptions } from "./client.js";
import { isAgentMemError } from "./errors.js";
import { MemoryStorage, userIdFromToken, type SessionStorage } from "./session.js";
import { TOOL_SPECS, executeTool, type ToolExecuteOptions, type ToolSelection } from "./tools.js";
import { isUUID, type RequestOptions } from "./transport.js";
import type { ContentPart, MessageContent, MessageIn, RawMessage, RecallRequest, ToolCall } from "./types.js";

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
export function sessionIdFor(userId: string, sessionId: string): string {
  if (isUUID(sessionId)) return sessionId;
  return uuidv5(`${userId}\n${sessionId}`, SESSION_NAMESPACE);
}

/** AgentMemChatMessageHistoryInput configures an AgentMemChatMessageHistory. */
export interface AgentMemChatMessageHistoryInput {
  /** The client, or the options to make one. */
  client: AgentMemClient | ClientOptions;
  /**
   * The session: a UUID, or any other string, mapped to a session of the user by sessionIdFor;
   * default: the active session of (user, agent), resolved on first use.
   */
  sessionId?: string;
  /** The agent (default `default`). */
  agent?: string;
  /** Where the active session's id is remembered when sessionId is not given (default: in memory). */
  storage?: SessionStorage;
  /** The most recent messages returned by getMessages (get-context `max_messages`, 1 to 500; default 100). */
  maxMessages?: number;
  /** Drop the oldest messages until the window's token estimate fits (get-context `max_tokens`). */
  maxTokens?: number;
  /** For service callers: the user (and tenant) to act for. */
  userId?: string;
  tenantId?: string;
  /** Options of every request (signal, time limit, retries). */
  requestOptions?: RequestOptions;
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

  readonly client: AgentMemClient;
  readonly agent: string;
  #sessionId: string | undefined;
  #session: ChatSession | undefined;
  #options: AgentMemChatMessageHistoryInput;
  /** The format asked of get-context: `langchain`, or `raw` mapped here for servers without it. */
  #format: "langchain" | "raw" = "langchain";

  constructor(fields: AgentMemChatMessageHistoryInput) {
    super(fields as never);
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
  async sessionId(): Promise<string> {
    if (this.#sessionId) {
      if (isUUID(this.#sessionId)) return this.#sessionId;
      const userId =
        this.#options.userId ?? userIdFromToken(await this.client.transport.token(false, this.#options.requestOptions?.signal));
      if (!userId) {
        throw new Error(
          `AgentMemChatMessageHistory: sessionId ${JSON.stringify(this.#sessionId)} is not a UUID, and the token names no user (sub) to map it for; give userId, or a UUID`,
        );
      }
      this.#sessionId = sessionIdFor(userId, this.#sessionId);
      return this.#sessionId;
    }
    return this.#session!.sessionId(this.#options.requestOptions);
  }

  #scope(): { user_id?: string; tenant_id?: string } {
    const s: { user_id?: string; tenant_id?: string } = {};
    if (this.#options.userId) s.user_id = this.#options.userId;
    if (this.#options.tenantId !== undefined) s.tenant_id = this.#options.tenantId;
    return s;
  }

  async getMessages(): Promise<BaseMessage[]> {
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
        const stored = ctx.messages.map((m) =>
          m.data.name === null ? { ...m, data: { ...m.data, name: undefined } } : m,
        );
        return mapStoredMessagesToChatMessages(stored as unknown as StoredMessage[]);
      } catch (err) {
        // A server before contract v1.1 knows no `langchain` format: map its raw messages here.
        if (!(isAgentMemError(err) && err.status === 400 && err.fieldError("format") !== undefined)) throw err;
        this.#format = "raw";
      }
    }
    const ctx = await this.client.getContext({ ...body, format: "raw" }, this.#options.requestOptions);
    return ctx.messages.map(fromRaw);
  }

  override async addMessage(message: BaseMessage): Promise<void> {
    await this.addMessages([message]);
  }

  /** addMessages commits the messages as one turn. */
  override async addMessages(messages: BaseMessage[]): Promise<void> {
    if (messages.length === 0) return;
    const session_id = await this.sessionId();
    await this.client.commitTurn(
      { ...this.#scope(), session_id, agent: this.agent, messages: messages.map(toMessageIn) },
      this.#options.requestOptions,
    );
  }

  /** clear deletes the session's messages and keeps the session. */
  override async clear(): Promise<void> {
    const session_id = await this.sessionId();
    try {
      await this.client.sessions.reset({ ...this.#scope(), session_id }, this.#options.requestOptions);
    } catch (err) {
      // A session never committed to has nothing to clear.
      if (!(isAgentMemError(err) && err.status === 404)) throw err;
    }
  }
}

/** messageType is a message's LangChain type (`human`, `ai`, ...), across @langchain/core versions. */
function messageType(m: BaseMessage): string {
  const t = m as unknown as { getType?: () => string; _getType: () => string };
  return typeof t.getType === "function" ? t.getType() : t._getType();
}

/**
 * toMessageIn maps a LangChain message to one message of commit-turn. Text-only content parts
 * are joined into a string (the message's text, as the contract defines it); other parts are
 * sent as they are (contract v1.1).
 */
export function toMessageIn(m: BaseMessage): MessageIn {
  const type = messageType(m);
  const role =
    type === "human"
      ? "user"
      : type === "ai"
        ? "assistant"
        : type === "system"
          ? "system"
          : type === "tool"
            ? "tool"
            : chatRole(m);
  const out: MessageIn = { role, content: content(m.content as MessageContent) };
  if (m.name) out.name = m.name;
  // The message's own id (LangChain's lc_run--..., LangGraph's run-..., a UUID): the server
  // stores it once per session, so saving the whole state again duplicates nothing.
  if (typeof m.id === "string" && m.id !== "" && [...m.id].length <= 255) out.id = m.id;
  if (role === "assistant") {
    const calls = (m as AIMessage).tool_calls ?? [];
    if (calls.length > 0) {
      out.tool_calls = calls.map(
        (c, i): ToolCall => ({
          id: c.id ?? `call_${i}`,
          type: "function",
          function: { name: c.name, arguments: JSON.stringify(c.args ?? {}) },
        }),
      );
    }
  }
  if (role === "tool") out.tool_call_id = (m as ToolMessage).tool_call_id;
  return out;
}

function chatRole(m: BaseMessage): MessageIn["role"] {
  const role = (m as ChatMessage).role;
  return role === "assistant" || role === "system" || role === "tool" ? role : "user";
}

function content(c: MessageContent): MessageContent {
  if (typeof c === "string") return c;
  if (Array.isArray(c) && c.length > 0 && c.every((p) => p.type === "text" && typeof p.text === "string")) {
    return (c as Extract<ContentPart, { type: "text" }>[]).map((p) => p.text).join("\n");
  }
  return c;
}

/** fromRaw maps a message of get-context's `raw` format to a LangChain message. */
export function fromRaw(m: RawMessage): BaseMessage {
  const base = {
    content: m.content as never,
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
      const tool_calls: { name: string; args: Record<string, unknown>; id: string; type: "tool_call" }[] = [];
      const invalid_tool_calls: { name: string; args: string; id: string; error: string; type: "invalid_tool_call" }[] = [];
      for (const c of m.tool_calls ?? []) {
        try {
          const args: unknown = JSON.parse(c.function.arguments || "{}");
          if (args === null || typeof args !== "object" || Array.isArray(args)) throw new Error("not an object");
          tool_calls.push({ name: c.function.name, args: args as Record<string, unknown>, id: c.id, type: "tool_call" });
        } catch {
          invalid_tool_calls.push({ name: c.function.name, args: c.function.arguments ?? "", id: c.id, error: "arguments are not a JSON object", type: "invalid_tool_call" });
        }
      }
      return new AIMessage({ ...base, tool_calls, invalid_tool_calls });
    }
  }
}

/** AgentMemRetrieverInput configures an AgentMemRetriever. */
export interface AgentMemRetrieverInput extends BaseRetrieverInput {
  client: AgentMemClient | ClientOptions;
  /** Results per query (1 to 100, default 5). */
  k?: number;
  /** This agent's and agent-less memories (default: every agent's). */
  agent?: string;
  /** `hybrid` (default), `vector` or `text`. */
  mode?: RecallRequest["mode"];
  /** Top-level metadata keys the memories must have. */
  filter?: Record<string, unknown>;
  minScore?: number;
  /** v1.1: `memories` (default), `messages` or `all`. */
  source?: RecallRequest["source"];
  /** v1.2: false leaves out the tenant's shared memories (default: recalled beside the user's own). */
  includeShared?: boolean;
  /** For service callers: the user (and tenant) to act for. */
  userId?: string;
  tenantId?: string;
  requestOptions?: RequestOptions;
}

/**
 * AgentMemRetriever is a LangChain.js retriever over recall: each memory (or message) found is a
 * Document (`pageContent` the memory, `metadata` its metadata with `id`, `score` and
 * `created_at`, and `shared: true` for a shared memory of the tenant), best first.
 */
export class AgentMemRetriever extends BaseRetriever {
  static override lc_name(): string {
    return "AgentMemRetriever";
  }
  lc_namespace = ["agentmem", "langchain", "retrievers"];

  readonly client: AgentMemClient;
  #options: AgentMemRetrieverInput;

  constructor(fields: AgentMemRetrieverInput) {
    super(fields);
    this.client = fields.client instanceof AgentMemClient ? fields.client : new AgentMemClient(fields.client);
    this.#options = fields;
  }

  override async _getRelevantDocuments(query: string): Promise<Document[]> {
    const o = this.#options;
    const body: RecallRequest = { query, k: o.k ?? 5 };
    if (o.agent) body.agent = o.agent;
    if (o.mode) body.mode = o.mode;
    if (o.filter) body.filter = o.filter;
    if (o.minScore !== undefined) body.min_score = o.minScore;
    if (o.source) body.source = o.source;
    if (o.includeShared !== undefined) body.include_shared = o.includeShared;
    if (o.userId) body.user_id = o.userId;
    if (o.tenantId !== undefined) body.tenant_id = o.tenantId;
    const { results } = await this.client.recall(body, o.requestOptions);
    return results.map(
      (h) =>
        new Document({
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
        }),
    );
  }
}

/** AgentMemToolsInput configures agentmemTools. */
export interface AgentMemToolsInput extends ToolExecuteOptions {
  /** The tools to give, by name; default every tool. */
  tools?: ToolSelection;
}

/**
 * agentmemTools gives agentmem's memory tools as LangChain tools (`tool()` of
 * @langchain/core/tools), for `bindTools` and agents. Each runs executeTool and answers the
 * model its text: the tool's structured answer, or the problem it can act on, as JSON.
 */
export function agentmemTools(client: AgentMemClient | ClientOptions, input: AgentMemToolsInput = {}) {
  const am = client instanceof AgentMemClient ? client : new AgentMemClient(client);
  const { tools: names, ...options } = input;
  return TOOL_SPECS.filter((t) => !names || names.includes(t.name)).map((t) =>
    tool(async (args: unknown) => (await executeTool(am, t.name, args, options)).text, {
      name: t.name,
      description: t.description,
      schema: t.inputSchema,
    }),
  );
}
