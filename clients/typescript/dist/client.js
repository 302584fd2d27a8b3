import { defaultStorage, readRemembered, sessionKey, userIdFromToken, } from "./session.js";
import { StreamCommit } from "./stream.js";
import { isUUID, Transport } from "./transport.js";
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
];
const everyFunction = true;
void everyFunction;
/**
 * AgentMemClient calls agentmem's functions. One method per function (and per op of the
 * functions that take one), with the request and answer types of docs/openapi.yaml.
 */
export class AgentMemClient {
    transport;
    constructor(options) {
        this.transport = new Transport(options);
    }
    /**
     * position is the greatest `Agentmem-Position` this client was given (see
     * `Transport.position`): sent with every request, so that its reads see its writes also
     * from a read replica. Keep it (e.g. in a cookie) and pass it as the `position` option to a
     * later client of the same user to carry that over.
     */
    get position() {
        return this.transport.position;
    }
    /** call sends body to function fn and answers the whole response (status, request id, replayed). */
    call(fn, body, opts) {
        return this.transport.call({ fn, body, repeatable: opts?.repeatable ?? false, idempotent: opts?.idempotent ?? false }, opts);
    }
    async #data(fn, body, repeatable, opts, idempotent = false) {
        const res = await this.transport.call({ fn, body, repeatable, idempotent }, opts);
        return res.data;
    }
    #op(fn, op, body, repeatable, opts, idempotent = false) {
        return this.#data(fn, { ...(body ?? {}), op }, repeatable, opts, idempotent);
    }
    /** activeSession resolves (default), activates or starts the current session of (user, agent). */
    activeSession(body = {}, opts) {
        return this.#data("active-session", body, body.mode !== "new", opts);
    }
    /**
     * commitTurn appends one turn. It sends an Idempotency-Key (opts.idempotencyKey, else a new
     * one) that every retry reuses, so a retried commit is stored once.
     */
    commitTurn(body, opts) {
        return this.#data("commit-turn", body, true, opts, true);
    }
    /** commitTurnResponse is commitTurn with the whole response (e.g. `replayed`). */
    commitTurnResponse(body, opts) {
        return this.transport.call({ fn: "commit-turn", body, repeatable: true, idempotent: true }, opts);
    }
    /** getContext answers everything an agent needs for its next prompt. */
    getContext(body, opts) {
        return this.#data("get-context", body, true, opts);
    }
    /** recall searches the user's long-term memories (v1.1: and past messages, with `source`). */
    recall(body, opts) {
        return this.#data("recall", body, true, opts);
    }
    /** sweepExpired deletes expired rows (service callers only). */
    sweepExpired(body = {}, opts) {
        return this.#data("sweep-expired", body, true, opts);
    }
    /** forgetUser erases everything stored for the caller (or, for a service caller, `user_id`). */
    forgetUser(body = {}, opts) {
        return this.#data("forget-user", body, true, opts);
    }
    /** userMemory is the user's key/value memory. */
    userMemory = {
        set: (body, opts) => this.#op("user-memory", "set", body, true, opts),
        get: (body, opts) => this.#op("user-memory", "get", body, true, opts),
        list: (body = {}, opts) => this.#op("user-memory", "list", body, true, opts),
        delete: (body, opts) => this.#op("user-memory", "delete", body, false, opts),
        clear: (body = {}, opts) => this.#op("user-memory", "clear", body, true, opts),
    };
    /** userState is the user's mode string. */
    userState = {
        set: (body, opts) => this.#op("user-state", "set", body, true, opts),
        get: (body = {}, opts) => this.#op("user-state", "get", body, true, opts),
        delete: (body = {}, opts) => this.#op("user-state", "delete", body, false, opts),
    };
    /** notes are the agent's Markdown notes about the user. */
    notes = {
        read: (body = {}, opts) => this.#op("notes", "read", body, true, opts),
        overwrite: (body, opts) => this.#op("notes", "overwrite", body, true, opts),
        append: (body, opts) => this.#op("notes", "append", body, false, opts),
        prepend: (body, opts) => this.#op("notes", "prepend", body, false, opts),
        replaceSection: (body, opts) => this.#op("notes", "replace_section", body, true, opts),
        deleteSection: (body, opts) => this.#op("notes", "delete_section", body, false, opts),
        clear: (body = {}, opts) => this.#op("notes", "clear", body, true, opts),
    };
    /** sessions lists sessions, pages history and edits sessions. */
    sessions = {
        list: (body = {}, opts) => this.#op("sessions", "list", body, true, opts),
        /**
         * history pages one session's messages, or without `session_id` the user's across every
         * session (each then carries its `session_id`); `since` keeps those created at or after it.
         */
        history: (body = {}, opts) => this.#op("sessions", "history", body, true, opts),
        reset: (body, opts) => this.#op("sessions", "reset", body, true, opts),
        delete: (body, opts) => this.#op("sessions", "delete", body, false, opts),
        deleteMessage: (body, opts) => this.#op("sessions", "delete_message", body, false, opts),
        setTitle: (body, opts) => this.#op("sessions", "set_title", body, true, opts),
        /** setMetadata replaces the session's metadata (a JSON object; `{}` clears it). */
        setMetadata: (body, opts) => this.#op("sessions", "set_metadata", body, true, opts),
        /** clear deletes every message of the caller (of `agent` when given) and keeps the sessions. */
        clear: (body = {}, opts) => this.#op("sessions", "clear", body, true, opts),
    };
    /** memories are the user's long-term memories. */
    memories = {
        list: (body = {}, opts) => this.#op("memories", "list", body, true, opts),
        get: (body, opts) => this.#op("memories", "get", body, true, opts),
        update: (body, opts) => this.#op("memories", "update", body, true, opts),
        delete: (body, opts) => this.#op("memories", "delete", body, false, opts),
        /**
         * create stores one fact without a turn (merged into a near-duplicate the user has), with an
         * Idempotency-Key that every retry reuses.
         */
        create: (body, opts) => this.#op("memories", "create", body, true, opts, true),
    };
    /** knowledge is the tenant's shared knowledge base. */
    knowledge = {
        ingest: (body, opts) => this.#op("knowledge", "ingest", body, true, opts),
        search: (body, opts) => this.#op("knowledge", "search", body, true, opts),
        delete: (body, opts) => this.#op("knowledge", "delete", body, false, opts),
    };
    /** intents asks for a session's sync or backfill to the enabled adapters. */
    intents(body, opts) {
        return this.#data("intents", body, false, opts);
    }
    /** jobs manages the orchestrator's jobs (service callers only). */
    jobs = {
        list: (body = {}, opts) => this.#op("jobs", "list", body, true, opts),
        get: (body, opts) => this.#op("jobs", "get", body, true, opts),
        retry: (body, opts) => this.#op("jobs", "retry", body, false, opts),
        purge: (body, opts) => this.#op("jobs", "purge", body, true, opts),
    };
    /** processJobs delivers due jobs (service callers only). */
    processJobs(body = {}, opts) {
        return this.#data("process-jobs", body, false, opts);
    }
    /** session makes the ChatSession of one agent: the session lifecycle of a chat frontend. */
    session(options = {}) {
        return new ChatSession(this, options);
    }
}
const opsCovered = [true, true, true, true, true, true, true];
void opsCovered;
/**
 * ChatSession is the session lifecycle of a chat frontend for one (user, agent): the current
 * session's id is remembered under `agentmem:session:<userId>:<agent>`; start() resolves it with
 * the server (which keeps the active session across devices), remembers the active one, and
 * newSession() starts a fresh one. Tabs sharing localStorage follow each other's changes.
 */
export class ChatSession {
    client;
    agent;
    storage;
    /** The session in use, once started. */
    id;
    #userId;
    #scope;
    #listeners = new Set();
    #detach;
    constructor(client, options = {}) {
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
    async key(signal) {
        if (!this.#userId)
            this.#userId = userIdFromToken(await this.client.transport.token(false, signal));
        return this.#userId ? sessionKey(this.#userId, this.agent) : undefined;
    }
    /**
     * start resolves the current session: the remembered id is sent to the server, which answers
     * the active session (`matched` tells whether it was the remembered one); that id is
     * remembered and used from now on.
     */
    async start(opts) {
        const key = await this.key(opts?.signal);
        const remembered = key ? await readRemembered(this.storage, key) : undefined;
        const res = await this.client.activeSession({ ...this.#scope, agent: this.agent, mode: "resolve", ...(remembered ? { session_id: remembered } : {}) }, opts);
        await this.#use(key, res.session_id);
        this.#watch(key);
        return info(res, remembered);
    }
    /** newSession starts a fresh session, makes it active everywhere and remembers it. */
    async newSession(opts) {
        const key = await this.key(opts?.signal);
        const remembered = key ? await readRemembered(this.storage, key) : undefined;
        const res = await this.client.activeSession({ ...this.#scope, agent: this.agent, mode: "new" }, opts);
        await this.#use(key, res.session_id);
        this.#watch(key);
        return info(res, remembered);
    }
    /** activate makes sessionId (the caller's own, or unused) the active session. */
    async activate(sessionId, opts) {
        const key = await this.key(opts?.signal);
        const remembered = key ? await readRemembered(this.storage, key) : undefined;
        const res = await this.client.activeSession({ ...this.#scope, agent: this.agent, mode: "activate", session_id: sessionId }, opts);
        await this.#use(key, res.session_id);
        this.#watch(key);
        return info(res, remembered);
    }
    /** forget removes the remembered id (e.g. on sign-out); the server's sessions stay. */
    async forget() {
        const key = await this.key();
        if (key)
            await this.storage.removeItem(key);
        this.id = undefined;
    }
    /** sessionId answers the session in use, starting it first when needed. */
    async sessionId(opts) {
        if (!this.id)
            await this.start(opts);
        return this.id;
    }
    /** commit appends one turn to the session (with an Idempotency-Key reused by its retries). */
    async commit(messages, extra = {}, opts) {
        const session_id = await this.sessionId(opts);
        return this.client.commitTurn({ ...this.#scope, session_id, agent: this.agent, messages, ...extra }, opts);
    }
    /** context answers get-context for the session. */
    async context(req = {}, opts) {
        const session_id = await this.sessionId(opts);
        return this.client.getContext({ ...this.#scope, ...req, session_id, agent: this.agent }, opts);
    }
    /** history pages the session's messages (newest first by default), since a time when given. */
    async history(req = {}, opts) {
        const session_id = await this.sessionId(opts);
        return this.client.sessions.history({ ...this.#scope, ...req, session_id, agent: this.agent }, opts);
    }
    /**
     * stream passes a model's stream through and, when it ends, commits `before` and the whole
     * answer as one turn (see StreamCommit).
     */
    stream(stream, options = {}, opts) {
        return new StreamCommit((messages, idempotencyKey) => this.commit(messages, {}, { ...opts, idempotencyKey }), stream, options);
    }
    /**
     * subscribe calls listener with the new id whenever the session in use changes: by this
     * object, or by another tab writing the same storage key (the browser's `storage` event).
     * It answers a function that unsubscribes.
     */
    subscribe(listener) {
        this.#listeners.add(listener);
        return () => this.#listeners.delete(listener);
    }
    /** close stops following other tabs. */
    close() {
        this.#detach?.();
        this.#detach = undefined;
        this.#listeners.clear();
    }
    async #use(key, id) {
        try {
            if (key)
                await this.storage.setItem(key, id);
        }
        catch {
            // storage full or refused: the session still works for this page
        }
        this.#set(id);
    }
    #set(id) {
        if (this.id === id)
            return;
        this.id = id;
        for (const l of this.#listeners)
            l(id);
    }
    #watch(key) {
        if (this.#detach || !key)
            return;
        const w = globalThis;
        if (typeof w.addEventListener !== "function" || this.storage !== w.localStorage)
            return;
        const onStorage = (e) => {
            if (e.key === key && isUUID(e.newValue))
                this.#set(e.newValue);
        };
        w.addEventListener("storage", onStorage);
        this.#detach = () => w.removeEventListener?.("storage", onStorage);
    }
}
function info(res, remembered) {
    return {
        sessionId: res.session_id,
        agent: res.agent,
        matched: res.matched,
        created: res.created,
        remembered,
        lastActiveAt: res.last_active_at,
    };
}
