import { AgentMemError, type FieldError } from "./errors.js";

/**
 * TokenGetter gives the access token of each request: called before every attempt, so a token
 * refreshed meanwhile is used on retries. `refresh` is true once after a 401, asking for a new
 * token (supabase-js: `auth.refreshSession()`); answering the same token again ends the call
 * with the 401. Null or undefined sends no Authorization header (the server answers 401).
 */
export type TokenGetter = (ctx: { refresh: boolean; signal?: AbortSignal }) =>
  | string
  | null
  | undefined
  | Promise<string | null | undefined>;

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
export const POSITION_HEADER = "Agentmem-Position";

const POSITION_RE = /^[0-9A-F]{16}$/i;

/** isPosition tells whether s is a position as the server gives them: 16 hexadecimal digits. */
export function isPosition(s: unknown): s is string {
  return typeof s === "string" && POSITION_RE.test(s);
}

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
export function uuid(): string {
  const c = globalThis.crypto as Crypto | undefined;
  if (c && typeof c.randomUUID === "function") return c.randomUUID();
  const b = new Uint8Array(16);
  if (c && typeof c.getRandomValues === "function") {
    c.getRandomValues(b);
  } else {
    // Only unique ids are needed here (idempotency keys, request ids), not secrets.
    for (let i = 0; i < 16; i++) b[i] = Math.floor(Math.random() * 256);
  }
  b[6] = (b[6]! & 0x0f) | 0x40;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const h = Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** isUUID tells whether s is a UUID in its usual text form. */
export function isUUID(s: unknown): s is string {
  return typeof s === "string" && UUID_RE.test(s);
}

/** parseRetryAfter reads a Retry-After header (seconds or an HTTP date) as seconds. */
export function parseRetryAfter(v: string | null, now = Date.now()): number | undefined {
  if (v == null || v.trim() === "") return undefined;
  if (/^\d+$/.test(v.trim())) return Number(v.trim());
  const t = Date.parse(v);
  if (Number.isNaN(t)) return undefined;
  return Math.max(0, Math.ceil((t - now) / 1000));
}

function abortError(signal: AbortSignal, fn: string): AgentMemError {
  return new AgentMemError({ status: 0, code: "aborted", detail: "the request was aborted", fn, cause: signal.reason });
}

/** sleep waits ms milliseconds, or until signal aborts (then it rejects). */
function sleep(ms: number, signal: AbortSignal | undefined, fn: string): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(abortError(signal, fn));
    const onAbort = () => {
      clearTimeout(t);
      reject(abortError(signal!, fn));
    };
    const t = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * Transport sends calls to the functions: token, headers, time limits, retries with backoff
 * that honours Retry-After, and problem+json answers turned into AgentMemError.
 */
export class Transport {
  readonly options: Required<Omit<TransportOptions, "functionUrls" | "token" | "fetch" | "headers" | "position">> &
    Pick<TransportOptions, "functionUrls" | "token" | "fetch" | "headers">;

  /**
   * position is the greatest `Agentmem-Position` an answer has given this client: the position
   * after its writes. It goes with every request, so that a deployment with read replicas
   * answers this client's reads only from a replica that has replayed its writes. Positions
   * compare as strings (they have one width). Undefined until a write's answer gives one.
   */
  position: string | undefined;

  constructor(options: TransportOptions) {
    if (!options || typeof options.url !== "string" || options.url === "") {
      throw new TypeError("agentmem: options.url is required, e.g. http://127.0.0.1:9000");
    }
    this.options = {
      retries: 3,
      retryBaseMs: 250,
      retryMaxMs: 8000,
      maxRetryAfterMs: 30000,
      timeoutMs: 30000,
      ...options,
      url: options.url.replace(/\/+$/, ""),
    };
    delete (this.options as TransportOptions).position;
    if (isPosition(options.position)) this.position = options.position.toUpperCase();
  }

  /** keepPosition keeps p when it is a position greater than the one kept. */
  keepPosition(p: string | null | undefined): void {
    if (!isPosition(p)) return;
    const up = p.toUpperCase();
    if (this.position === undefined || up > this.position) this.position = up;
  }

  /** endpoint is the URL of function fn. */
  endpoint(fn: string): string {
    return this.options.functionUrls?.[fn] ?? `${this.options.url}/v1/${fn}`;
  }

  /** token asks the configured token source. */
  async token(refresh: boolean, signal?: AbortSignal): Promise<string | null | undefined> {
    const t = this.options.token;
    if (typeof t === "function") return await t({ refresh, signal });
    return t;
  }

  /** call sends one call, retrying as the options say, and answers the parsed body. */
  async call<T>(spec: CallSpec, opts: RequestOptions = {}): Promise<ApiResponse<T>> {
    const o = this.options;
    const fetchFn = o.fetch ?? globalThis.fetch;
    if (typeof fetchFn !== "function") throw new TypeError("agentmem: no fetch in this runtime; pass options.fetch");
    const retries = opts.retries ?? o.retries;
    const timeoutMs = opts.timeoutMs ?? o.timeoutMs;
    const requestId = opts.requestId ?? uuid();
    const key = spec.idempotent ? (opts.idempotencyKey ?? uuid()) : undefined;
    const payload = JSON.stringify(spec.body ?? {});
    const signal = opts.signal;
    let refreshed = false;
    let token = await this.token(false, signal);

    for (let attempt = 0; ; attempt++) {
      if (signal?.aborted) throw abortError(signal, spec.fn);
      const headers: Record<string, string> = {
        "Content-Type": "application/json",
        Accept: "application/json, application/problem+json",
        "X-Request-Id": requestId,
        ...o.headers,
        ...opts.headers,
      };
      if (token) headers.Authorization = `Bearer ${token}`;
      if (key) headers["Idempotency-Key"] = key;
      if (this.position !== undefined && headers[POSITION_HEADER] === undefined) headers[POSITION_HEADER] = this.position;

      // One controller per attempt: the caller's signal and the time limit both end it.
      const ac = new AbortController();
      let timedOut = false;
      const onAbort = () => ac.abort(signal?.reason);
      signal?.addEventListener("abort", onAbort, { once: true });
      const timer =
        timeoutMs > 0
          ? setTimeout(() => {
              timedOut = true;
              ac.abort();
            }, timeoutMs)
          : undefined;

      let res: Response;
      let text: string;
      try {
        res = await fetchFn(this.endpoint(spec.fn), { method: "POST", headers, body: payload, signal: ac.signal });
        text = await res.text();
      } catch (err) {
        if (signal?.aborted) throw abortError(signal, spec.fn);
        const e = new AgentMemError({
          status: 0,
          code: timedOut ? "timeout" : "network_error",
          detail: timedOut ? `no answer within ${timeoutMs} ms` : "the request could not be completed (network error)",
          requestId,
          fn: spec.fn,
          cause: err,
        });
        if (spec.repeatable && attempt < retries) {
          await sleep(this.backoff(attempt), signal, spec.fn);
          continue;
        }
        throw e;
      } finally {
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
      }

      const rid = res.headers.get("X-Request-Id") ?? requestId;
      const position = res.headers.get(POSITION_HEADER) ?? undefined;
      this.keepPosition(position);
      if (res.ok) {
        let data: T;
        try {
          data = (text === "" ? null : JSON.parse(text)) as T;
        } catch (err) {
          throw new AgentMemError({
            status: res.status,
            code: "invalid_response",
            detail: "the answer is not JSON",
            requestId: rid,
            fn: spec.fn,
            cause: err,
          });
        }
        return {
          status: res.status,
          data,
          requestId: rid,
          replayed: res.headers.get("Idempotent-Replayed") === "true",
          attempts: attempt + 1,
          position: isPosition(position) ? position : undefined,
        };
      }

      const err = problemError(res, text, rid, spec.fn);
      if (res.status === 401 && !refreshed && typeof o.token === "function") {
        // One more try with a refreshed token, not counted as a retry.
        refreshed = true;
        const fresh = await this.token(true, signal);
        if (fresh && fresh !== token) {
          token = fresh;
          attempt--;
          continue;
        }
      }
      if ((res.status === 429 || res.status === 503) && attempt < retries) {
        const wait = err.retryAfter !== undefined ? err.retryAfter * 1000 : this.backoff(attempt);
        if (wait <= o.maxRetryAfterMs) {
          await sleep(Math.max(wait, 0), signal, spec.fn);
          continue;
        }
      }
      throw err;
    }
  }

  /** backoff is the delay before retry attempt+1: full jitter over an exponential ceiling. */
  backoff(attempt: number): number {
    const ceiling = Math.min(this.options.retryMaxMs, this.options.retryBaseMs * 2 ** attempt);
    return Math.round(ceiling / 2 + (Math.random() * ceiling) / 2);
  }
}

/** problemError turns an error answer into an AgentMemError, problem+json or not. */
function problemError(res: Response, text: string, requestId: string, fn: string): AgentMemError {
  const retryAfter = parseRetryAfter(res.headers.get("Retry-After"));
  let p: Record<string, unknown> | undefined;
  try {
    const v: unknown = JSON.parse(text);
    if (v && typeof v === "object" && !Array.isArray(v)) p = v as Record<string, unknown>;
  } catch {
    // not JSON: a proxy's page, say
  }
  const str = (v: unknown) => (typeof v === "string" ? v : undefined);
  return new AgentMemError({
    status: res.status,
    code: str(p?.code) ?? codeForStatus(res.status),
    title: str(p?.title) ?? res.statusText,
    detail: str(p?.detail) ?? (res.statusText || `HTTP ${res.status}`),
    errors: Array.isArray(p?.errors) ? (p!.errors as FieldError[]) : [],
    type: str(p?.type),
    requestId: str(p?.request_id) ?? requestId,
    retryAfter,
    fn,
  });
}

function codeForStatus(status: number): string {
  switch (status) {
    case 400:
      return "invalid_request";
    case 401:
      return "unauthenticated";
    case 403:
      return "forbidden";
    case 404:
      return "not_found";
    case 405:
      return "method_not_allowed";
    case 409:
      return "conflict";
    case 413:
      return "payload_too_large";
    case 415:
      return "unsupported_media_type";
    case 429:
      return "rate_limited";
    case 503:
      return "unavailable";
    default:
      return status >= 500 ? "internal" : "invalid_response";
  }
}
