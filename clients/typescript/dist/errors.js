/**
 * AgentMemError is every error the client throws. For an answer of the server it carries the
 * problem+json fields (`status`, `code`, `title`, `detail`, `errors`, `type`) and the request id;
 * when no answer came, `status` is 0 and `code` one of ClientErrorCode.
 */
export class AgentMemError extends Error {
    name = "AgentMemError";
    /** HTTP status, or 0 when no answer came. */
    status;
    /** Machine-readable code: the server's ErrorCode, or a ClientErrorCode. */
    code;
    /** Short summary of the status (problem `title`). */
    title;
    /** Human-readable explanation (problem `detail`), safe to show to a user. */
    detail;
    /** The invalid fields of a 400 answer, else empty. */
    errors;
    /** Problem `type` URI (`about:blank`). */
    type;
    /** The request id (answer header `X-Request-Id` or problem `request_id`), for the server log. */
    requestId;
    /** Seconds the server asked to wait (`Retry-After` of a 429 or 503). */
    retryAfter;
    /** The function called, e.g. `commit-turn`. */
    fn;
    constructor(init) {
        const detail = init.detail ?? init.title ?? init.code;
        super(init.status ? `${init.status} ${init.code}: ${detail}` : `${init.code}: ${detail}`, { cause: init.cause });
        this.status = init.status;
        this.code = init.code;
        this.title = init.title ?? "";
        this.detail = detail;
        this.errors = init.errors ?? [];
        this.type = init.type ?? "about:blank";
        this.requestId = init.requestId;
        this.retryAfter = init.retryAfter;
        this.fn = init.fn;
    }
    /** fieldError returns the message of the invalid field `field` of a 400 answer, if any. */
    fieldError(field) {
        return this.errors.find((e) => e.field === field)?.message;
    }
    /** retryable tells whether the same request may succeed later (429, 503, no answer). */
    get retryable() {
        return this.status === 429 || this.status === 503 || this.code === "network_error" || this.code === "timeout";
    }
    toJSON() {
        return {
            name: this.name,
            status: this.status,
            code: this.code,
            title: this.title,
            detail: this.detail,
            errors: this.errors,
            request_id: this.requestId,
            retry_after: this.retryAfter,
        };
    }
}
/** isAgentMemError tells whether err is an AgentMemError (also across bundles). */
export function isAgentMemError(err) {
    return err instanceof AgentMemError || (typeof err === "object" && err !== null && err.name === "AgentMemError");
}
