import { BaseListChatMessageHistory } from "@langchain/core/chat_history";
import { Document } from "@langchain/core/documents";
import { type BaseMessage } from "@langchain/core/messages";
import { BaseRetriever, type BaseRetrieverInput } from "@langchain/core/retrievers";
import { AgentMemClient, type ClientOptions } from "./client.js";
import { type SessionStorage } from "./session.js";
import { type ToolExecuteOptions, type ToolSelection } from "./tools.js";
import { type RequestOptions } from "./transport.js";
import type { MessageIn, RawMessage, RecallRequest } from "./types.js";
/**
 * SESSION_NAMESPACE is the UUID namespace of the agentmem session ids that sessionIdFor derives
 * from LangChain session ids that are not UUIDs. It never changes: a change would move every
 * such conversation to a new, empty session.
 */
export declare const SESSION_NAMESPACE = "9bf34fa2-0720-4141-ac9b-5dc5e233ca72";
/**
 * sessionIdFor answers the agentmem session of a LangChain session id: a UUID is the session id
 * itself; any other string (LangChain's examples use ids such as `"foobarbaz"`) maps to the UUID
 * v5 of `<userId>` and `<sessionId>` joined by a newline, in SESSION_NAMESPACE. The user is part
 * of the name because a session belongs to the user who first commits to it: two users'
 * `"foobarbaz"` are two sessions, and the same user's is always the same one.
 */
export declare function sessionIdFor(userId: string, sessionId: string): string;
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
export declare class AgentMemChatMessageHistory extends BaseListChatMessageHistory {
    #private;
    lc_namespace: string[];
    readonly client: AgentMemClient;
    readonly agent: string;
    constructor(fields: AgentMemChatMessageHistoryInput);
    /** sessionId answers the agentmem session this history reads and writes. */
    sessionId(): Promise<string>;
    getMessages(): Promise<BaseMessage[]>;
    addMessage(message: BaseMessage): Promise<void>;
    /** addMessages commits the messages as one turn. */
    addMessages(messages: BaseMessage[]): Promise<void>;
    /** clear deletes the session's messages and keeps the session. */
    clear(): Promise<void>;
}
/**
 * toMessageIn maps a LangChain message to one message of commit-turn. Text-only content parts
 * are joined into a string (the message's text, as the contract defines it); other parts are
 * sent as they are (contract v1.1).
 */
export declare function toMessageIn(m: BaseMessage): MessageIn;
/** fromRaw maps a message of get-context's `raw` format to a LangChain message. */
export declare function fromRaw(m: RawMessage): BaseMessage;
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
export declare class AgentMemRetriever extends BaseRetriever {
    #private;
    static lc_name(): string;
    lc_namespace: string[];
    readonly client: AgentMemClient;
    constructor(fields: AgentMemRetrieverInput);
    _getRelevantDocuments(query: string): Promise<Document[]>;
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
export declare function agentmemTools(client: AgentMemClient | ClientOptions, input?: AgentMemToolsInput): import("@langchain/core/tools").DynamicStructuredTool<import("./tool-definitions.js").JsonObjectSchema, unknown, unknown, string>[];
