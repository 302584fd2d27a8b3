import { AgentMemError } from "./errors.js";
/** POSITION_HEADER carries a position in the database's write-ahead log (see Transport.position). */
export const POSITION_HEADER = "Agentmem-Position";
const POSITION_RE = /^[0-9A-F]{16}$/i;
/** isPosition tells whether s is a position as the server gives them: 16 hexadecimal digits. */
export function isPosition(s) {
    return typeof s === "string" && POSITION_RE.test(s);
}
/**
 * uuid returns a random (version 4) UUID, also where crypto.randomUUID is missing (pages served
 * over plain http from another host) or Web Crypto is not global (Node 18).
 */
export function uuid() {
    const c = globalThis.crypto;
    if (c && typeof c.randomUUID === "function")
        return c.randomUUID();
    const b = new Uint8Array(16);
    if (c && typeof c.getRandomValues === "function") {
        c.getRandomValues(b);
    }
    else {
        // Only unique ids are needed here (idempotency keys, request ids), not secrets.
        for (let i = 0; i < 16; i++)
            b[i] = Math.floor(Math.random() * 256);
    }
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    const h = Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** isUUID tells whether s is a UUID in its usual text form. */
export function isUUID(s) {
    return typeof s === "string" && UUID_RE.test(s);
}
/** parseRetryAfter reads a Retry-After header (seconds or an HTTP date) as seconds. */
export function parseRetryAfter(v, now = Date.now()) {
    if (v == null || v.trim() === "")
        return undefined;
    if (/^\d+$/.test(v.trim()))
        return Number(v.trim());
    const t = Date.parse(v);
    if (Number.isNaN(t))
        return undefined;
    return Math.max(0, Math.ceil((t - now) / 1000));
}
function abortError(signal, fn) {
    return new AgentMemError({ status: 0, code: "aborted", detail: "the request was aborted", fn, cause: signal.reason });
}
/** sleep waits ms milliseconds, or until signal aborts (then it rejects). */
function sleep(ms, signal, fn) {
    return new Promise((resolve, reject) => {
        if (signal?.aborted)
            return reject(abortError(signal, fn));
        const onAbort = () => {
            clearTimeout(t);
            reject(abortError(signal, fn));
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
    options;
    /**
     * position is the greatest `Agentmem-Position` an answer has given this client: the position
     * after its writes. It goes with every request, so that a deployment with read replicas
     * answers this client's reads only from a replica that has replayed its writes. Positions
     * compare as strings (they have one width). Undefined until a write's answer gives one.
     */
    position;
    constructor(options) {
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
        delete this.options.position;
        if (isPosition(options.position))
            this.position = options.position.toUpperCase();
    }
    /** keepPosition keeps p when it is a position greater than the one kept. */
    keepPosition(p) {
        if (!isPosition(p))
            return;
        const up = p.toUpperCase();
        if (this.position === undefined || up > this.position)
            this.position = up;
    }
    /** endpoint is the URL of function fn. */
    endpoint(fn) {
        return this.options.functionUrls?.[fn] ?? `${this.options.url}/v1/${fn}`;
    }
    /** token asks the configured token source. */
    async token(refresh, signal) {
        const t = this.options.token;
        if (typeof t === "function")
            return await t({ refresh, signal });
        return t;
    }
    /** call sends one call, retrying as the options say, and answers the parsed body. */
    async call(spec, opts = {}) {
        const o = this.options;
        const fetchFn = o.fetch ?? globalThis.fetch;
        if (typeof fetchFn !== "function")
            throw new TypeError("agentmem: no fetch in this runtime; pass options.fetch");
        const retries = opts.retries ?? o.retries;
        const timeoutMs = opts.timeoutMs ?? o.timeoutMs;
        const requestId = opts.requestId ?? uuid();
        const key = spec.idempotent ? (opts.idempotencyKey ?? uuid()) : undefined;
        const payload = JSON.stringify(spec.body ?? {});
        const signal = opts.signal;
        let refreshed = false;
        let token = await this.token(false, signal);
        for (let attempt = 0;; attempt++) {
            if (signal?.aborted)
                throw abortError(signal, spec.fn);
            const headers = {
                "Content-Type": "application/json",
                Accept: "application/json, application/problem+json",
                "X-Request-Id": requestId,
                ...o.headers,
                ...opts.headers,
            };
            if (token)
                headers.Authorization = `Bearer ${token}`;
            if (key)
                headers["Idempotency-Key"] = key;
            if (this.position !== undefined && headers[POSITION_HEADER] === undefined)
                headers[POSITION_HEADER] = this.position;
            // One controller per attempt: the caller's signal and the time limit both end it.
            const ac = new AbortController();
            let timedOut = false;
            const onAbort = () => ac.abort(signal?.reason);
            signal?.addEventListener("abort", onAbort, { once: true });
            const timer = timeoutMs > 0
                ? setTimeout(() => {
                    timedOut = true;
                    ac.abort();
                }, timeoutMs)
                : undefined;
            let res;
            let text;
            try {
                res = await fetchFn(this.endpoint(spec.fn), { method: "POST", headers, body: payload, signal: ac.signal });
                text = await res.text();
            }
            catch (err) {
                if (signal?.aborted)
                    throw abortError(signal, spec.fn);
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
            }
            finally {
                clearTimeout(timer);
                signal?.removeEventListener("abort", onAbort);
            }
            const rid = res.headers.get("X-Request-Id") ?? requestId;
            const position = res.headers.get(POSITION_HEADER) ?? undefined;
            this.keepPosition(position);
            if (res.ok) {
                let data;
                try {
                    data = (text === "" ? null : JSON.parse(text));
                }
                catch (err) {
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
    backoff(attempt) {
        const ceiling = Math.min(this.options.retryMaxMs, this.options.retryBaseMs * 2 ** attempt);
        return Math.round(ceiling / 2 + (Math.random() * ceiling) / 2);
    }
}
/** problemError turns an error answer into an AgentMemError, problem+json or not. */
function problemError(res, text, requestId, fn) {
    const retryAfter = parseRetryAfter(res.headers.get("Retry-After"));
    let p;
    try {
        const v = JSON.parse(text);
        if (v && typeof v === "object" && !Array.isArray(v))
            p = v;
    }
    catch {
        // not JSON: a proxy's page, say
    }
    const str = (v) => (typeof v === "string" ? v : undefined);
    return new AgentMemError({
        status: res.status,
        code: str(p?.code) ?? codeForStatus(res.status),
        title: str(p?.title) ?? res.statusText,
        detail: str(p?.detail) ?? (res.statusText || `HTTP ${res.status}`),
        errors: Array.isArray(p?.errors) ? p.errors : [],
        type: str(p?.type),
        requestId: str(p?.request_id) ?? requestId,
        retryAfter,
        fn,
    });
}
function codeForStatus(status) {
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
