import { type ModelMessage, type ToolSet, type UIMessage } from "ai";
import { AgentMemClient, type ClientOptions } from "./client.js";
import { type ToolExecuteOptions, type ToolSelection } from "./tools.js";
import { type RequestOptions } from "./transport.js";
import type { MessageIn, RawMessage } from "./types.js";
/** MemoryToolsOptions configures memoryTools. */
export interface MemoryToolsOptions extends ToolExecuteOptions {
    /** The tools to give, by name; default every tool. */
    tools?: ToolSelection;
}
/**
 * memoryTools gives agentmem's memory tools for generateText and streamText (`tools`). Each
 * runs executeTool: its output is the tool's structured answer, or `{error}` with the problem
 * a model can act on (invalid arguments, not found, a limit).
 */
export declare function memoryTools(client: AgentMemClient | ClientOptions, options?: MemoryToolsOptions): ToolSet;
/**
 * fromModelMessages converts the AI SDK's model messages into agentmem's messages for
 * commit-turn: text and content parts (images and files as data URLs or links), an
 * assistant's tool calls as `tool_calls`, and each tool result as a `tool` message. Reasoning
 * is not stored.
 */
export declare function fromModelMessages(messages: readonly ModelMessage[]): MessageIn[];
/** fromUIMessages converts the AI SDK's UI messages (useChat's) into agentmem's messages. */
export declare function fromUIMessages(messages: readonly UIMessage[]): Promise<MessageIn[]>;
/**
 * toModelMessages converts agentmem's stored messages (get-context `raw`, sessions
 * `history`) into the AI SDK's model messages: tool calls as `tool-call` parts, each run of
 * tool messages as one `tool` message of `tool-result` parts (JSON output when the stored
 * text is JSON), images and files as parts.
 */
export declare function toModelMessages(messages: readonly RawMessage[]): ModelMessage[];
/**
 * toUIMessages converts agentmem's stored messages into UI messages (for useChat's initial
 * messages): text and file parts, and an assistant's tool calls with their results as
 * `dynamic-tool` parts of the same message.
 */
export declare function toUIMessages(messages: readonly RawMessage[]): UIMessage[];
/** WindowOptions says which session's window to load. */
export interface WindowOptions {
    sessionId: string;
    agent?: string;
    /** get-context's `max_messages` and `max_tokens`. */
    maxMessages?: number;
    maxTokens?: number;
    /** For service callers: the user (and tenant) to act for. */
    userId?: string;
    tenantId?: string;
}
/**
 * loadMessages reads the session's window (get-context, tool calls kept with their results)
 * as model messages, to put before the new ones of a call.
 */
export declare function loadMessages(client: AgentMemClient | ClientOptions, o: WindowOptions, opts?: RequestOptions): Promise<ModelMessage[]>;
/** CommitOnFinishOptions says which turn an onFinish commits. */
export interface CommitOnFinishOptions extends WindowOptions {
    /** The messages of the turn that came before the answer (the user's new message), as given to the call. */
    input: readonly ModelMessage[];
    /**
     * The commit's Idempotency-Key; default `ai-sdk:<sessionId>:<callId>`, the same for every
     * delivery of one call's onFinish, so a retried onFinish stores the turn once.
     */
    idempotencyKey?: string;
    /** Called with the error when the commit fails; default: the error is thrown to the SDK. */
    onError?: (err: unknown) => void;
}
/** FinishEvent is what commitOnFinish reads of generateText's and streamText's onFinish event. */
export interface FinishEvent {
    callId?: string;
    responseMessages?: readonly ModelMessage[];
    response?: {
        messages?: readonly ModelMessage[];
    };
}
/**
 * commitOnFinish gives an onFinish for generateText and streamText that commits the turn (the
 * input messages, then the model's answer with its tool calls and results) to the session,
 * with an Idempotency-Key that every delivery of the same call's event reuses: however often
 * the event is delivered, the turn is stored once.
 */
export declare function commitOnFinish(client: AgentMemClient | ClientOptions, o: CommitOnFinishOptions): (event: FinishEvent) => Promise<void>;
