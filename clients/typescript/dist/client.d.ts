import { type SessionStorage } from "./session.js";
import { StreamCommit, type StreamCommitOptions } from "./stream.js";
import { Transport, type ApiResponse, type RequestOptions, type TransportOptions } from "./transport.js";
import type { ActiveSession, ActiveSessionRequest, CommitResult, CommitTurnRequest, ContextFor, ContextFormat, ForgetUserRequest, ForgetUserResult, GetContextRequest, IntentRequest, IntentResult, MemoriesCreateRequest, MemoryIn, MessageIn, OpBody, ProcessJobsRequest, ProcessJobsResult, RecallRequest, RecallResult, Scope, SessionHistory, SweepRequest, SweepResult } from "./types.js";
/** ClientOptions configure an AgentMemClient. */
export type ClientOptions = TransportOptions;
/** FUNCTIONS lists every function the client calls: those of docs/openapi.yaml, then v1.1's. */
export declare const FUNCTIONS: readonly ["active-session", "commit-turn", "get-context", "recall", "sweep-expired", "user-memory", "user-state", "notes", "sessions", "memories", "knowledge", "forget-user", "intents", "jobs", "process-jobs", "mcp"];
/**
 * AgentMemClient calls agentmem's functions. One method per function (and per op of the
 * functions that take one), with the request and answer types of docs/openapi.yaml.
 */
export declare class AgentMemClient {
    #private;
    readonly transport: Transport;
    constructor(options: ClientOptions);
    /**
     * position is the greatest `Agentmem-Position` this client was given (see
     * `Transport.position`): sent with every request, so that its reads see its writes also
     * from a read replica. Keep it (e.g. in a cookie) and pass it as the `position` option to a
     * later client of the same user to carry that over.
     */
    get position(): string | undefined;
    /** call sends body to function fn and answers the whole response (status, request id, replayed). */
    call<T = unknown>(fn: string, body: unknown, opts?: RequestOptions & {
        repeatable?: boolean;
        idempotent?: boolean;
    }): Promise<ApiResponse<T>>;
    /** activeSession resolves (default), activates or starts the current session of (user, agent). */
    activeSession(body?: ActiveSessionRequest, opts?: RequestOptions): Promise<ActiveSession>;
    /**
     * commitTurn appends one turn. It sends an Idempotency-Key (opts.idempotencyKey, else a new
     * one) that every retry reuses, so a retried commit is stored once.
     */
    commitTurn(body: CommitTurnRequest, opts?: RequestOptions): Promise<CommitResult>;
    /** commitTurnResponse is commitTurn with the whole response (e.g. `replayed`). */
    commitTurnResponse(body: CommitTurnRequest, opts?: RequestOptions): Promise<ApiResponse<CommitResult>>;
    /** getContext answers everything an agent needs for its next prompt. */
    getContext<F extends ContextFormat | undefined = undefined>(body: GetContextRequest & {
        format?: F;
    }, opts?: RequestOptions): Promise<ContextFor<F>>;
    /** recall searches the user's long-term memories (v1.1: and past messages, with `source`). */
    recall(body: RecallRequest, opts?: RequestOptions): Promise<RecallResult>;
    /** sweepExpired deletes expired rows (service callers only). */
    sweepExpired(body?: SweepRequest, opts?: RequestOptions): Promise<SweepResult>;
    /** forgetUser erases everything stored for the caller (or, for a service caller, `user_id`). */
    forgetUser(body?: ForgetUserRequest, opts?: RequestOptions): Promise<ForgetUserResult>;
    /** userMemory is the user's key/value memory. */
    readonly userMemory: {
        set: (body: OpBody<"user-memory", "set">, opts?: RequestOptions) => Promise<{
            key: string;
            value: {
                [key: string]: unknown;
            };
            updated_at: import("./index.js").components["schemas"]["Timestamp"];
            created: boolean;
        }>;
        get: (body: OpBody<"user-memory", "get">, opts?: RequestOptions) => Promise<{
            key: string;
            value: {
                [key: string]: unknown;
            };
            updated_at: import("./index.js").components["schemas"]["Timestamp"];
        }>;
        list: (body?: OpBody<"user-memory", "list">, opts?: RequestOptions) => Promise<{
            items: import("./index.js").components["schemas"]["UserMemoryItem"][];
        }>;
        delete: (body: OpBody<"user-memory", "delete">, opts?: RequestOptions) => Promise<{
            deleted: number;
        }>;
        clear: (body?: OpBody<"user-memory", "clear">, opts?: RequestOptions) => Promise<{
            deleted: number;
        }>;
    };
    /** userState is the user's mode string. */
    readonly userState: {
        set: (body: OpBody<"user-state", "set">, opts?: RequestOptions) => Promise<{
            mode: string;
            updated_at: import("./index.js").components["schemas"]["Timestamp"];
            created: boolean;
        }>;
        get: (body?: OpBody<"user-state", "get">, opts?: RequestOptions) => Promise<{
            mode: string;
            updated_at: import("./index.js").components["schemas"]["Timestamp"];
        }>;
        delete: (body?: OpBody<"user-state", "delete">, opts?: RequestOptions) => Promise<{
            deleted: true;
        }>;
    };
    /** notes are the agent's Markdown notes about the user. */
    readonly notes: {
        read: (body?: OpBody<"notes", "read">, opts?: RequestOptions) => Promise<{
            agent: import("./index.js").components["schemas"]["Agent"];
            content: string;
            updated_at: import("./index.js").components["schemas"]["Timestamp"] | null;
            chars: number;
            max_chars: number;
            section_created?: boolean;
        }>;
        overwrite: (body: OpBody<"notes", "overwrite">, opts?: RequestOptions) => Promise<{
            agent: import("./index.js").components["schemas"]["Agent"];
            content: string;
            updated_at: import("./index.js").components["schemas"]["Timestamp"] | null;
            chars: number;
            max_chars: number;
            section_created?: boolean;
        }>;
        append: (body: OpBody<"notes", "append">, opts?: RequestOptions) => Promise<{
            agent: import("./index.js").components["schemas"]["Agent"];
            content: string;
            updated_at: import("./index.js").components["schemas"]["Timestamp"] | null;
            chars: number;
            max_chars: number;
            section_created?: boolean;
        }>;
        prepend: (body: OpBody<"notes", "prepend">, opts?: RequestOptions) => Promise<{
            agent: import("./index.js").components["schemas"]["Agent"];
            content: string;
            updated_at: import("./index.js").components["schemas"]["Timestamp"] | null;
            chars: number;
            max_chars: number;
            section_created?: boolean;
        }>;
        replaceSection: (body: OpBody<"notes", "replace_section">, opts?: RequestOptions) => Promise<{
            agent: import("./index.js").components["schemas"]["Agent"];
            content: string;
            updated_at: import("./index.js").components["schemas"]["Timestamp"] | null;
            chars: number;
            max_chars: number;
            section_created?: boolean;
        } & {
            section_created: boolean;
        }>;
        deleteSection: (body: OpBody<"notes", "delete_section">, opts?: RequestOptions) => Promise<{
            agent: import("./index.js").components["schemas"]["Agent"];
            content: string;
            updated_at: import("./index.js").components["schemas"]["Timestamp"] | null;
            chars: number;
            max_chars: number;
            section_created?: boolean;
        }>;
        clear: (body?: OpBody<"notes", "clear">, opts?: RequestOptions) => Promise<{
            agent: import("./index.js").components["schemas"]["Agent"];
            deleted: boolean;
        }>;
    };
    /** sessions lists sessions, pages history and edits sessions. */
    readonly sessions: {
        list: (body?: OpBody<"sessions", "list">, opts?: RequestOptions) => Promise<{
            sessions: import("./index.js").components["schemas"]["SessionSummary"][];
            next_cursor: string | null;
        }>;
        /**
         * history pages one session's messages, or without `session_id` the user's across every
         * session (each then carries its `session_id`); `since` keeps those created at or after it.
         */
        history: (body?: OpBody<"sessions", "history">, opts?: RequestOptions) => Promise<{
            messages: import("./index.js").components["schemas"]["HistoryMessage"][];
            next_cursor: string | null;
            total: number;
        }>;
        reset: (body: OpBody<"sessions", "reset">, opts?: RequestOptions) => Promise<{
            deleted: number;
        }>;
        delete: (body: OpBody<"sessions", "delete">, opts?: RequestOptions) => Promise<{
            deleted: true;
        }>;
        deleteMessage: (body: OpBody<"sessions", "delete_message">, opts?: RequestOptions) => Promise<{
            deleted: true;
        }>;
        setTitle: (body: OpBody<"sessions", "set_title">, opts?: RequestOptions) => Promise<{
            session_id: import("./index.js").components["schemas"]["UUID"];
            title: string | null;
        }>;
        /** setMetadata replaces the session's metadata (a JSON object; `{}` clears it). */
        setMetadata: (body: OpBody<"sessions", "set_metadata">, opts?: RequestOptions) => Promise<{
            session_id: import("./index.js").components["schemas"]["UUID"];
            metadata: import("./index.js").components["schemas"]["SessionMetadataObject"];
        }>;
        /** clear deletes every message of the caller (of `agent` when given) and keeps the sessions. */
        clear: (body?: OpBody<"sessions", "clear">, opts?: RequestOptions) => Promise<{
            deleted: number;
        }>;
    };
    /** memories are the user's long-term memories. */
    readonly memories: {
        list: (body?: OpBody<"memories", "list">, opts?: RequestOptions) => Promise<{
            items: import("./index.js").components["schemas"]["MemoryItem"][];
            next_cursor: string | null;
        }>;
        get: (body: OpBody<"memories", "get">, opts?: RequestOptions) => Promise<{
            id: import("./index.js").components["schemas"]["UUID"];
            content: string;
            metadata: {
                [key: string]: unknown;
            };
            agent: string | null;
            created_at: import("./index.js").components["schemas"]["Timestamp"];
            updated_at: import("./index.js").components["schemas"]["Timestamp"];
            expires_at: import("./index.js").components["schemas"]["Timestamp"];
            shared?: true;
        }>;
        update: (body: OpBody<"memories", "update">, opts?: RequestOptions) => Promise<{
            id: import("./index.js").components["schemas"]["UUID"];
            content: string;
            metadata: {
                [key: string]: unknown;
            };
            agent: string | null;
            created_at: import("./index.js").components["schemas"]["Timestamp"];
            updated_at: import("./index.js").components["schemas"]["Timestamp"];
            expires_at: import("./index.js").components["schemas"]["Timestamp"];
            shared?: true;
        }>;
        delete: (body: OpBody<"memories", "delete">, opts?: RequestOptions) => Promise<{
            deleted: true;
        }>;
        /**
         * create stores one fact without a turn (merged into a near-duplicate the user has), with an
         * Idempotency-Key that every retry reuses.
         */
        create: (body: MemoriesCreateRequest, opts?: RequestOptions) => Promise<{
            id: import("./index.js").components["schemas"]["UUID"];
            merged: boolean;
            content_changed: boolean;
        }>;
    };
    /** knowledge is the tenant's shared knowledge base. */
    readonly knowledge: {
        ingest: (body: OpBody<"knowledge", "ingest">, opts?: RequestOptions) => Promise<{
            source: string;
            tenant_id: string;
            chunks: number;
            replaced: number;
        }>;
        search: (body: OpBody<"knowledge", "search">, opts?: RequestOptions) => Promise<{
            results: import("./index.js").components["schemas"]["KnowledgeHit"][];
        }>;
        delete: (body: OpBody<"knowledge", "delete">, opts?: RequestOptions) => Promise<{
            source: string;
            tenant_id: string;
            deleted: number;
        }>;
    };
    /** intents asks for a session's sync or backfill to the enabled adapters. */
    intents(body: IntentRequest, opts?: RequestOptions): Promise<IntentResult>;
    /** jobs manages the orchestrator's jobs (service callers only). */
    readonly jobs: {
        list: (body?: OpBody<"jobs", "list">, opts?: RequestOptions) => Promise<{
            jobs: import("./index.js").components["schemas"]["Job"][];
            next_cursor: string | null;
        }>;
        get: (body: OpBody<"jobs", "get">, opts?: RequestOptions) => Promise<{
            id: import("./index.js").components["schemas"]["UUID"];
            intent: string;
            adapter: string;
            status: import("./index.js").components["schemas"]["JobStatus"];
            attempts: number;
            next_attempt_at: import("./index.js").components["schemas"]["Timestamp"];
            last_error: string | null;
            created_at: import("./index.js").components["schemas"]["Timestamp"];
            updated_at: import("./index.js").components["schemas"]["Timestamp"];
            session_id: string | null;
            user_id: string;
        }>;
        retry: (body: OpBody<"jobs", "retry">, opts?: RequestOptions) => Promise<{
            id: import("./index.js").components["schemas"]["UUID"];
            intent: string;
            adapter: string;
            status: import("./index.js").components["schemas"]["JobStatus"];
            attempts: number;
            next_attempt_at: import("./index.js").components["schemas"]["Timestamp"];
            last_error: string | null;
            created_at: import("./index.js").components["schemas"]["Timestamp"];
            updated_at: import("./index.js").components["schemas"]["Timestamp"];
            session_id: string | null;
            user_id: string;
        }>;
        purge: (body: OpBody<"jobs", "purge">, opts?: RequestOptions) => Promise<{
            deleted: number;
        }>;
    };
    /** processJobs delivers due jobs (service callers only). */
    processJobs(body?: ProcessJobsRequest, opts?: RequestOptions): Promise<ProcessJobsResult>;
    /** session makes the ChatSession of one agent: the session lifecycle of a chat frontend. */
    session(options?: ChatSessionOptions): ChatSession;
}
/** ChatSessionOptions configure a ChatSession. */
export interface ChatSessionOptions {
    /** The agent (default `default`). */
    agent?: string;
    /** Where the session id is remembered (default: localStorage in browsers, else memory). */
    storage?: SessionStorage;
    /** The user's id in the storage key (default: `sub` of the access token). */
    userId?: string;
    /** For service callers: the user (and tenant) to act for, sent in every body. */
    scope?: Scope;
}
/** SessionInfo says which session a ChatSession uses, and how it came to. */
export interface SessionInfo {
    sessionId: string;
    agent: string;
    /** Whether the remembered id was the active session (false when none was remembered). */
    matched: boolean;
    /** Whether the server created the session for this request. */
    created: boolean;
    /** The id remembered in storage before this call, if any. */
    remembered: string | undefined;
    lastActiveAt: string;
}
/**
 * ChatSession is the session lifecycle of a chat frontend for one (user, agent): the current
 * session's id is remembered under `agentmem:session:<userId>:<agent>`; start() resolves it with
 * the server (which keeps the active session across devices), remembers the active one, and
 * newSession() starts a fresh one. Tabs sharing localStorage follow each other's changes.
 */
export declare class ChatSession {
    #private;
    readonly client: AgentMemClient;
    readonly agent: string;
    readonly storage: SessionStorage;
    /** The session in use, once started. */
    id: string | undefined;
    constructor(client: AgentMemClient, options?: ChatSessionOptions);
    /**
     * key is the storage key, with the user id taken from the token when not given; undefined
     * when neither says who the user is (then nothing is remembered, and the server decides).
     */
    key(signal?: AbortSignal): Promise<string | undefined>;
    /**
     * start resolves the current session: the remembered id is sent to the server, which answers
     * the active session (`matched` tells whether it was the remembered one); that id is
     * remembered and used from now on.
     */
    start(opts?: RequestOptions): Promise<SessionInfo>;
    /** newSession starts a fresh session, makes it active everywhere and remembers it. */
    newSession(opts?: RequestOptions): Promise<SessionInfo>;
    /** activate makes sessionId (the caller's own, or unused) the active session. */
    activate(sessionId: string, opts?: RequestOptions): Promise<SessionInfo>;
    /** forget removes the remembered id (e.g. on sign-out); the server's sessions stay. */
    forget(): Promise<void>;
    /** sessionId answers the session in use, starting it first when needed. */
    sessionId(opts?: RequestOptions): Promise<string>;
    /** commit appends one turn to the session (with an Idempotency-Key reused by its retries). */
    commit(messages: MessageIn[], extra?: {
        memories?: MemoryIn[];
        ttl_seconds?: number;
        answers_only?: boolean;
    }, opts?: RequestOptions): Promise<CommitResult>;
    /** context answers get-context for the session. */
    context<F extends ContextFormat | undefined = undefined>(req?: Omit<GetContextRequest, "session_id" | "agent"> & {
        format?: F;
    }, opts?: RequestOptions): Promise<ContextFor<F>>;
    /** history pages the session's messages (newest first by default), since a time when given. */
    history(req?: {
        order?: "newest" | "oldest";
        limit?: number;
        cursor?: string;
        since?: string;
    }, opts?: RequestOptions): Promise<SessionHistory>;
    /**
     * stream passes a model's stream through and, when it ends, commits `before` and the whole
     * answer as one turn (see StreamCommit).
     */
    stream<T>(stream: AsyncIterable<T> | Iterable<T>, options?: StreamCommitOptions, opts?: RequestOptions): StreamCommit<T>;
    /**
     * subscribe calls listener with the new id whenever the session in use changes: by this
     * object, or by another tab writing the same storage key (the browser's `storage` event).
     * It answers a function that unsubscribes.
     */
    subscribe(listener: (id: string) => void): () => void;
    /** close stops following other tabs. */
    close(): void;
}
