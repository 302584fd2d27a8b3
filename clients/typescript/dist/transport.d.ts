/**
 * TokenGetter gives the access token of each request: called before every attempt, so a token
 * refreshed meanwhile is used on retries. `refresh` is true once after a 401, asking for a new
 * token (supabase-js: `auth.refreshSession()`); answering the same token again ends the call
 * with the 401. Null or undefined sends no Authorization header (the server answers 401).
 */
export type TokenGetter = (ctx: {
    refresh: boolean;
    signal?: AbortSignal;
}) => string | null | undefined | Promise<string | null | undefined>;
/** TransportOptions are the connection settings of a client. */
export interface TransportOptions {
    /**
     * Base URL of the API: `http://127.0.0.1:9000` (local server) or the API Gateway URL; each
     * function is called at `<url>/v1/<name>`.
     */
    url: string;
    /** Per-function URLs (e.g. Lambda Function URLs, served at `/`) that override `url`. */
    functionUrls?: Partial<Record<string, string>>;
    /** The access token: a fixed string, or a getter (see supabaseToken). */
    token?: string | TokenGetter;
    /** fetch to use (default: globalThis.fetch). */
    fetch?: typeof fetch;
    /** Retries after a 429, a 503 or (for requests safe to repeat) no answer. Default 3. */
    retries?: number;
    /** First backoff delay in milliseconds, doubled on each retry, with full jitter. Default 250. */
    retryBaseMs?: number;
    /** Largest backoff delay in milliseconds. Default 8000. */
    retryMaxMs?: number;
    /**
     * The longest `Retry-After` (milliseconds) the client waits for; an answer asking for more
     * is thrown at once. Default 30000.
     */
    maxRetryAfterMs?: number;
    /** Time limit of one attempt in milliseconds (0: none). Default 30000. */
    timeoutMs?: number;
    /** Extra headers on every request (e.g. an API gateway key). */
    headers?: Record<string, string>;
    /**
     * The position to start from (see `Transport.position`), e.g. one kept in a cookie by an
     * earlier process of the same user; ignored unless it is 16 hexadecimal digits.
     */
    position?: string;
}
/** RequestOptions tune one call. */
export interface RequestOptions {
    /** Cancels the call, its retries and their waits. */
    signal?: AbortSignal;
    /** Time limit of one attempt in milliseconds (0: none); default the client's. */
    timeoutMs?: number;
    /** Retries for this call; default the client's. */
    retries?: number;
    /**
     * Idempotency-Key of a commit (default: a new UUID per call, reused by its retries). Pass your
     * own to make a retry of the whole operation, e.g. after a reload, a replay.
     */
    idempotencyKey?: string;
    /** X-Request-Id to send (default: a new UUID per call). */
    requestId?: string;
    /** Extra headers for this call. */
    headers?: Record<string, string>;
}
/** ApiResponse is one successful answer with what its headers say. */
export interface ApiResponse<T> {
    status: number;
    data: T;
    requestId: string | undefined;
    /** True when a commit's answer was replayed for a repeated Idempotency-Key. */
    replayed: boolean;
    /** The attempts made (1 when no retry was needed). */
    attempts: number;
    /** The `Agentmem-Position` of the answer: the position after its writes, when it has one. */
    position: string | undefined;
}
/** POSITION_HEADER carries a position in the database's write-ahead log (see Transport.position). */
export declare const POSITION_HEADER = "Agentmem-Position";
/** isPosition tells whether s is a position as the server gives them: 16 hexadecimal digits. */
export declare function isPosition(s: unknown): s is string;
/** CallSpec describes one call for Transport.call. */
export interface CallSpec {
    fn: string;
    body: unknown;
    /** Whether the call may be repeated after a lost answer (the server did it or not, the same result). */
    repeatable: boolean;
    /** Whether to send an Idempotency-Key. */
    idempotent?: boolean;
}
/**
 * uuid returns a random (version 4) UUID, also where crypto.randomUUID is missing (pages served
 * over plain http from another host) or Web Crypto is not global (Node 18).
 */
export declare function uuid(): string;
/** isUUID tells whether s is a UUID in its usual text form. */
export declare function isUUID(s: unknown): s is string;
/** parseRetryAfter reads a Retry-After header (seconds or an HTTP date) as seconds. */
export declare function parseRetryAfter(v: string | null, now?: number): number | undefined;
/**
 * Transport sends calls to the functions: token, headers, time limits, retries with backoff
 * that honours Retry-After, and problem+json answers turned into AgentMemError.
 */
export declare class Transport {
    readonly options: Required<Omit<TransportOptions, "functionUrls" | "token" | "fetch" | "headers" | "position">> & Pick<TransportOptions, "functionUrls" | "token" | "fetch" | "headers">;
    /**
     * position is the greatest `Agentmem-Position` an answer has given this client: the position
     * after its writes. It goes with every request, so that a deployment with read replicas
     * answers this client's reads only from a replica that has replayed its writes. Positions
     * compare as strings (they have one width). Undefined until a write's answer gives one.
     */
    position: string | undefined;
    constructor(options: TransportOptions);
    /** keepPosition keeps p when it is a position greater than the one kept. */
    keepPosition(p: string | null | undefined): void;
    /** endpoint is the URL of function fn. */
    endpoint(fn: string): string;
    /** token asks the configured token source. */
    token(refresh: boolean, signal?: AbortSignal): Promise<string | null | undefined>;
    /** call sends one call, retrying as the options say, and answers the parsed body. */
    call<T>(spec: CallSpec, opts?: RequestOptions): Promise<ApiResponse<T>>;
    /** backoff is the delay before retry attempt+1: full jitter over an exponential ceiling. */
    backoff(attempt: number): number;
}
