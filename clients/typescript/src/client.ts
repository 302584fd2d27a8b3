import {
  defaultStorage,
  readRemembered,
  sessionKey,
  userIdFromToken,
  type SessionStorage,
} from "./session.js";
import { StreamCommit, type StreamCommitOptions } from "./stream.js";
import { isUUID, Transport, type ApiResponse, type RequestOptions, type TransportOptions } from "./transport.js";
import type {
  ActiveSession,
  ActiveSessionRequest,
  CommitResult,
  CommitTurnRequest,
  ContextFor,
  ContextFormat,
  Deleted,
  ForgetUserRequest,
  ForgetUserResult,
  FunctionName,
  GetContextRequest,
  IntentRequest,
  IntentResult,
  Job,
  JobList,
  JobsPurged,
  KnowledgeDeleted,
  KnowledgeIngested,
  KnowledgeSearchResult,
  MemoriesCreateRequest,
  MemoryCreated,
  MemoryIn,
  MemoryItem,
  MemoryList,
  MessageIn,
  NotesCleared,
  NotesDocument,
  OpBody,
  OpName,
  ProcessJobsRequest,
  ProcessJobsResult,
  RecallRequest,
  RecallResult,
  Scope,
  SessionHistory,
  SessionList,
  SessionMetadata,
  SessionsResetResult,
  SessionTitle,
  SweepRequest,
  SweepResult,
  UserMemoryDeleted,
  UserMemoryItem,
  UserMemoryList,
  UserMemorySetResult,
  UserState,
  UserStateSetResult,
} from "./types.js";

/** ClientOptions configure an AgentMemClient. */
export type ClientOptions = TransportOptions;

/** FUNCTIONS lists every function the client calls: those of docs/openapi.yaml, then v1.1's. */
export const FUNCTIONS = [
  "active-session",
  "commit-turn",
  "get-context",
  "recall",
  "sweep-expired",
  "user-memory",
  "user-state",
  "notes",
  "sessions",
  "memories",
  "knowledge",
  "forget-user",
  "intents",
  "jobs",
  "process-jobs",
  // An MCP server: MCP clients speak to it; toolDefinitions and executeTool give its tools
  // to function calling through the functions above.
  "mcp",
] as const satisfies readonly FunctionName[];

// Every function of the API document has a place in FUNCTIONS (tsc fails otherwise).
type Missing = Exclude<FunctionName, (typeof FUNCTIONS)[number]>;
const everyFunction: [Missing] extends [never] ? true : Missing = true;
void everyFunction;

// Each op group below must name every op of its function in the API document: AllOps fails to
// compile when the document gains an op the client lacks (and `op` calls fail for a removed one).
type AllOps<F extends FunctionName, Names extends string> = [Exclude<OpName<F>, Names>] extends [never]
  ? true
  : Exclude<OpName<F>, Names>;

/**
 * AgentMemClient calls agentmem's functions. One method per function (and per op of the
 * functions that take one), with the request and answer types of docs/openapi.yaml.
 */
export class AgentMemClient {
  readonly transport: Transport;

  constructor(options: ClientOptions) {
    this.transport = new Transport(options);
  }

  /**
   * position is the greatest `Agentmem-Position` this client was given (see
   * `Transport.position`): sent with every request, so that its reads see its writes also
   * from a read replica. Keep it (e.g. in a cookie) and pass it as the `position` option to a
   * later client of the same user to carry that over.
   */
  get position(): string | undefined {
    return this.transport.position;
  }

  /** call sends body to function fn and answers the whole response (status, request id, replayed). */
  call<T = unknown>(
    fn: string,
    body: unknown,
    opts?: RequestOptions & { repeatable?: boolean; idempotent?: boolean },
  ): Promise<ApiResponse<T>> {
    return this.transport.call<T>(
      { fn, body, repeatable: opts?.repeatable ?? false, idempotent: opts?.idempotent ?? false },
      opts,
    );
  }

  async #data<T>(fn: string, body: unknown, repeatable: boolean, opts?: RequestOptions, idempotent = false): Promise<T> {
    const res = await this.transport.call<T>({ fn, body, repeatable, idempotent }, opts);
    return res.data;
  }

  #op<T>(fn: string, op: string, body: object | undefined, repeatable: boolean, opts?: RequestOptions, idempotent = false): Promise<T> {
    return this.#data<T>(fn, { ...(body ?? {}), op }, repeatable, opts, idempotent);
  }

  /** activeSession resolves (default), activates or starts the current session of (user, agent). */
  activeSession(body: ActiveSessionRequest = {}, opts?: RequestOptions): Promise<ActiveSession> {
    return this.#data("active-session", body, body.mode !== "new", opts);
  }

  /**
   * commitTurn appends one turn. It sends an Idempotency-Key (opts.idempotencyKey, else a new
   * one) that every retry reuses, so a retried commit is stored once.
   */
  commitTurn(body: CommitTurnRequest, opts?: RequestOptions): Promise<CommitResult> {
    return this.#data("commit-turn", body, true, opts, true);
  }

  /** commitTurnResponse is commitTurn with the whole response (e.g. `replayed`). */
  commitTurnResponse(body: CommitTurnRequest, opts?: RequestOptions): Promise<ApiResponse<CommitResult>> {
    return this.transport.call<CommitResult>({ fn: "commit-turn", body, repeatable: true, idempotent: true }, opts);
  }

  /** getContext answers everything an agent needs for its next prompt. */
  getContext<F extends ContextFormat | undefined = undefined>(
    body: GetContextRequest & { format?: F },
    opts?: RequestOptions,
  ): Promise<ContextFor<F>> {
    return this.#data("get-context", body, true, opts);
  }

  /** recall searches the user's long-term memories (v1.1: and past messages, with `source`). */
  recall(body: RecallRequest, opts?: RequestOptions): Promise<RecallResult> {
    return this.#data("recall", body, true, opts);
  }

  /** sweepExpired deletes expired rows (service callers only). */
  sweepExpired(body: SweepRequest = {}, opts?: RequestOptions): Promise<SweepResult> {
    return this.#data("sweep-expired", body, true, opts);
  }

  /** forgetUser erases everything stored for the caller (or, for a service caller, `user_id`). */
  forgetUser(body: ForgetUserRequest = {}, opts?: RequestOptions): Promise<ForgetUserResult> {
    return this.#data("forget-user", body, true, opts);
  }

  /** userMemory is the user's key/value memory. */
  readonly userMemory = {
    set: (body: OpBody<"user-memory", "set">, opts?: RequestOptions) =>
      this.#op<UserMemorySetResult>("user-memory", "set", body, true, opts),
    get: (body: OpBody<"user-memory", "get">, opts?: RequestOptions) =>
      this.#op<UserMemoryItem>("user-memory", "get", body, true, opts),
    list: (body: OpBody<"user-memory", "list"> = {}, opts?: RequestOptions) =>
      this.#op<UserMemoryList>("user-memory", "list", body, true, opts),
    delete: (body: OpBody<"user-memory", "delete">, opts?: RequestOptions) =>
      this.#op<UserMemoryDeleted>("user-memory", "delete", body, false, opts),
    clear: (body: OpBody<"user-memory", "clear"> = {}, opts?: RequestOptions) =>
      this.#op<UserMemoryDeleted>("user-memory", "clear", body, true, opts),
  };

  /** userState is the user's mode string. */
  readonly userState = {
    set: (body: OpBody<"user-state", "set">, opts?: RequestOptions) =>
      this.#op<UserStateSetResult>("user-state", "set", body, true, opts),
    get: (body: OpBody<"user-state", "get"> = {}, opts?: RequestOptions) =>
      this.#op<UserState>("user-state", "get", body, true, opts),
    delete: (body: OpBody<"user-state", "delete"> = {}, opts?: RequestOptions) =>
      this.#op<Deleted>("user-state", "delete", body, false, opts),
  };

  /** notes are the agent's Markdown notes about the user. */
  readonly notes = {
    read: (body: OpBody<"notes", "read"> = {}, opts?: RequestOptions) =>
      this.#op<NotesDocument>("notes", "read", body, true, opts),
    overwrite: (body: OpBody<"notes", "overwrite">, opts?: RequestOptions) =>
      this.#op<NotesDocument>("notes", "overwrite", body, true, opts),
    append: (body: OpBody<"notes", "append">, opts?: RequestOptions) =>
      this.#op<NotesDocument>("notes", "append", body, false, opts),
    prepend: (body: OpBody<"notes", "prepend">, opts?: RequestOptions) =>
      this.#op<NotesDocument>("notes", "prepend", body, false, opts),
    replaceSection: (body: OpBody<"notes", "replace_section">, opts?: RequestOptions) =>
      this.#op<NotesDocument & { section_created: boolean }>("notes", "replace_section", body, true, opts),
    deleteSection: (body: OpBody<"notes", "delete_section">, opts?: RequestOptions) =>
      this.#op<NotesDocument>("notes", "delete_section", body, false, opts),
    clear: (body: OpBody<"notes", "clear"> = {}, opts?: RequestOptions) =>
      this.#op<NotesCleared>("notes", "clear", body, true, opts),
  };

  /** sessions lists sessions, pages history and edits sessions. */
  readonly sessions = {
    list: (body: OpBody<"sessions", "list"> = {}, opts?: RequestOptions) =>
      this.#op<SessionList>("sessions", "list", body, true, opts),
    /**
     * history pages one session's messages, or without `session_id` the user's across every
     * session (each then carries its `session_id`); `since` keeps those created at or after it.
     */
    history: (body: OpBody<"sessions", "history"> = {}, opts?: RequestOptions) =>
      this.#op<SessionHistory>("sessions", "history", body, true, opts),
    reset: (body: OpBody<"sessions", "reset">, opts?: RequestOptions) =>
      this.#op<SessionsResetResult>("sessions", "reset", body, true, opts),
    delete: (body: OpBody<"sessions", "delete">, opts?: RequestOptions) =>
      this.#op<Deleted>("sessions", "delete", body, false, opts),
    deleteMessage: (body: OpBody<"sessions", "delete_message">, opts?: RequestOptions) =>
      this.#op<Deleted>("sessions", "delete_message", body, false, opts),
    setTitle: (body: OpBody<"sessions", "set_title">, opts?: RequestOptions) =>
      this.#op<SessionTitle>("sessions", "set_title", body, true, opts),
    /** setMetadata replaces the session's metadata (a JSON object; `{}` clears it). */
    setMetadata: (body: OpBody<"sessions", "set_metadata">, opts?: RequestOptions) =>
      this.#op<SessionMetadata>("sessions", "set_metadata", body, true, opts),
    /** clear deletes every message of the caller (of `agent` when given) and keeps the sessions. */
    clear: (body: OpBody<"sessions", "clear"> = {}, opts?: RequestOptions) =>
      this.#op<SessionsResetResult>("sessions", "clear", body, true, opts),
  };

  /** memories are the user's long-term memories. */
  readonly memories = {
    list: (body: OpBody<"memories", "list"> = {}, opts?: RequestOptions) =>
      this.#op<MemoryList>("memories", "list", body, true, opts),
    get: (body: OpBody<"memories", "get">, opts?: RequestOptions) =>
      this.#op<MemoryItem>("memories", "get", body, true, opts),
    update: (body: OpBody<"memories", "update">, opts?: RequestOptions) =>
      this.#op<MemoryItem>("memories", "update", body, true, opts),
    delete: (body: OpBody<"memories", "delete">, opts?: RequestOptions) =>
      this.#op<Deleted>("memories", "delete", body, false, opts),
    /**
     * create stores one fact without a turn (merged into a near-duplicate the user has), with an
     * Idempotency-Key that every retry reuses.
     */
    create: (body: MemoriesCreateRequest, opts?: RequestOptions) =>
      this.#op<MemoryCreated>("memories", "create", body, true, opts, true),
  };

  /** knowledge is the tenant's shared knowledge base. */
  readonly knowledge = {
    ingest: (body: OpBody<"knowledge", "ingest">, opts?: RequestOptions) =>
      this.#op<KnowledgeIngested>("knowledge", "ingest", body, true, opts),
    search: (body: OpBody<"knowledge", "search">, opts?: RequestOptions) =>
      this.#op<KnowledgeSearchResult>("knowledge", "search", body, true, opts),
    delete: (body: OpBody<"knowledge", "delete">, opts?: RequestOptions) =>
      this.#op<KnowledgeDeleted>("knowledge", "delete", body, false, opts),
  };

  /** intents asks for a session's sync or backfill to the enabled adapters. */
  intents(body: IntentRequest, opts?: RequestOptions): Promise<IntentResult> {
    return this.#data("intents", body, false, opts);
  }

  /** jobs manages the orchestrator's jobs (service callers only). */
  readonly jobs = {
    list: (body: OpBody<"jobs", "list"> = {}, opts?: RequestOptions) => this.#op<JobList>("jobs", "list", body, true, opts),
    get: (body: OpBody<"jobs", "get">, opts?: RequestOptions) => this.#op<Job>("jobs", "get", body, true, opts),
    retry: (body: OpBody<"jobs", "retry">, opts?: RequestOptions) => this.#op<Job>("jobs", "retry", body, false, opts),
    purge: (body: OpBody<"jobs", "purge">, opts?: RequestOptions) => this.#op<JobsPurged>("jobs", "purge", body, true, opts),
  };

  /** processJobs delivers due jobs (service callers only). */
  processJobs(body: ProcessJobsRequest = {}, opts?: RequestOptions): Promise<ProcessJobsResult> {
    return this.#data("process-jobs", body, false, opts);
  }

  /** session makes the ChatSession of one agent: the session lifecycle of a chat frontend. */
  session(options: ChatSessionOptions = {}): ChatSession {
    return new ChatSession(this, options);
  }
}

const opsCovered: [
  AllOps<"user-memory", "set" | "get" | "list" | "delete" | "clear">,
  AllOps<"user-state", "set" | "get" | "delete">,
  AllOps<"notes", "read" | "overwrite" | "append" | "prepend" | "replace_section" | "delete_section" | "clear">,
  AllOps<"sessions", "list" | "history" | "reset" | "delete" | "delete_message" | "set_title" | "set_metadata" | "clear">,
  AllOps<"memories", "create" | "list" | "get" | "update" | "delete">,
  AllOps<"knowledge", "ingest" | "search" | "delete">,
  AllOps<"jobs", "list" | "get" | "retry" | "purge">,
] = [true, true, true, true, true, true, true];
void opsCovered;

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
export class ChatSession {
  readonly client: AgentMemClient;
  readonly agent: string;
  readonly storage: SessionStorage;
  /** The session in use, once started. */
  id: string | undefined;
  #userId: string | undefined;
  #scope: Scope;
  #listeners = new Set<(id: string) => void>();
  #detach: (() => void) | undefined;

  constructor(client: AgentMemClient, options: ChatSessionOptions = {}) {
    this.client = client;
    this.agent = options.agent ?? "default";
    this.storage = options.storage ?? defaultStorage();
    this.#userId = options.userId ?? options.scope?.user_id;
    this.#scope = options.scope ?? {};
  }

  /**
   * key is the storage key, with the user id taken from the token when not given; undefined
   * when neither says who the user is (then nothing is remembered, and the server decides).
   */
  async key(signal?: AbortSignal): Promise<string | undefined> {
    if (!this.#userId) this.#userId = userIdFromToken(await this.client.transport.token(false, signal));
    return this.#userId ? sessionKey(this.#userId, this.agent) : undefined;
  }

  /**
   * start resolves the current session: the remembered id is sent to the server, which answers
   * the active session (`matched` tells whether it was the remembered one); that id is
   * remembered and used from now on.
   */
  async start(opts?: RequestOptions): Promise<SessionInfo> {
    const key = await this.key(opts?.signal);
    const remembered = key ? await readRemembered(this.storage, key) : undefined;
    const res = await this.client.activeSession(
      { ...this.#scope, agent: this.agent, mode: "resolve", ...(remembered ? { session_id: remembered } : {}) },
      opts,
    );
    await this.#use(key, res.session_id);
    this.#watch(key);
    return info(res, remembered);
  }

  /** newSession starts a fresh session, makes it active everywhere and remembers it. */
  async newSession(opts?: RequestOptions): Promise<SessionInfo> {
    const key = await this.key(opts?.signal);
    const remembered = key ? await readRemembered(this.storage, key) : undefined;
    const res = await this.client.activeSession({ ...this.#scope, agent: this.agent, mode: "new" }, opts);
    await this.#use(key, res.session_id);
    this.#watch(key);
    return info(res, remembered);
  }

  /** activate makes sessionId (the caller's own, or unused) the active session. */
  async activate(sessionId: string, opts?: RequestOptions): Promise<SessionInfo> {
    const key = await this.key(opts?.signal);
    const remembered = key ? await readRemembered(this.storage, key) : undefined;
    const res = await this.client.activeSession(
      { ...this.#scope, agent: this.agent, mode: "activate", session_id: sessionId },
      opts,
    );
    await this.#use(key, res.session_id);
    this.#watch(key);
    return info(res, remembered);
  }

  /** forget removes the remembered id (e.g. on sign-out); the server's sessions stay. */
  async forget(): Promise<void> {
    const key = await this.key();
    if (key) await this.storage.removeItem(key);
    this.id = undefined;
  }

  /** sessionId answers the session in use, starting it first when needed. */
  async sessionId(opts?: RequestOptions): Promise<string> {
    if (!this.id) await this.start(opts);
    return this.id!;
  }

  /** commit appends one turn to the session (with an Idempotency-Key reused by its retries). */
  async commit(
    messages: MessageIn[],
    extra: { memories?: MemoryIn[]; ttl_seconds?: number; answers_only?: boolean } = {},
    opts?: RequestOptions,
  ): Promise<CommitResult> {
    const session_id = await this.sessionId(opts);
    return this.client.commitTurn({ ...this.#scope, session_id, agent: this.agent, messages, ...extra }, opts);
  }

  /** context answers get-context for the session. */
  async context<F extends ContextFormat | undefined = undefined>(
    req: Omit<GetContextRequest, "session_id" | "agent"> & { format?: F } = {},
    opts?: RequestOptions,
  ): Promise<ContextFor<F>> {
    const session_id = await this.sessionId(opts);
    return this.client.getContext<F>({ ...this.#scope, ...req, session_id, agent: this.agent } as GetContextRequest & { format?: F }, opts);
  }

  /** history pages the session's messages (newest first by default), since a time when given. */
  async history(
    req: { order?: "newest" | "oldest"; limit?: number; cursor?: string; since?: string } = {},
    opts?: RequestOptions,
  ): Promise<SessionHistory> {
    const session_id = await this.sessionId(opts);
    return this.client.sessions.history({ ...this.#scope, ...req, session_id, agent: this.agent }, opts);
  }

  /**
   * stream passes a model's stream through and, when it ends, commits `before` and the whole
   * answer as one turn (see StreamCommit).
   */
  stream<T>(stream: AsyncIterable<T> | Iterable<T>, options: StreamCommitOptions = {}, opts?: RequestOptions): StreamCommit<T> {
    return new StreamCommit<T>(
      (messages, idempotencyKey) => this.commit(messages, {}, { ...opts, idempotencyKey }),
      stream,
      options,
    );
  }

  /**
   * subscribe calls listener with the new id whenever the session in use changes: by this
   * object, or by another tab writing the same storage key (the browser's `storage` event).
   * It answers a function that unsubscribes.
   */
  subscribe(listener: (id: string) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** close stops following other tabs. */
  close(): void {
    this.#detach?.();
    this.#detach = undefined;
    this.#listeners.clear();
  }

  async #use(key: string | undefined, id: string): Promise<void> {
    try {
      if (key) await this.storage.setItem(key, id);
    } catch {
      // storage full or refused: the session still works for this page
    }
    this.#set(id);
  }

  #set(id: string): void {
    if (this.id === id) return;
    this.id = id;
    for (const l of this.#listeners) l(id);
  }

  #watch(key: string | undefined): void {
    if (this.#detach || !key) return;
    const w = globalThis as unknown as {
      addEventListener?: (t: string, f: (e: StorageEvent) => void) => void;
      removeEventListener?: (t: string, f: (e: StorageEvent) => void) => void;
      localStorage?: unknown;
    };
    if (typeof w.addEventListener !== "function" || this.storage !== w.localStorage) return;
    const onStorage = (e: StorageEvent) => {
      if (e.key === key && isUUID(e.newValue)) this.#set(e.newValue);
    };
    w.addEventListener("storage", onStorage);
    this.#detach = () => w.removeEventListener?.("storage", onStorage);
  }
}

function info(res: ActiveSession, remembered: string | undefined): SessionInfo {
  return {
    sessionId: res.session_id,
    agent: res.agent,
    matched: res.matched,
    created: res.created,
    remembered,
    lastActiveAt: res.last_active_at,
  };
}
