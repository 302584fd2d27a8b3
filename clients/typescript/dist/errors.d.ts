import type { components } from "./generated/openapi.js";
/** FieldError is one invalid field of a 400 answer: a JSON path into the body and what is wrong. */
export type FieldError = components["schemas"]["FieldError"];
/** ServerErrorCode is a `code` the server answers (see docs/openapi.yaml, ErrorCode). */
export type ServerErrorCode = components["schemas"]["ErrorCode"];
/**
 * ClientErrorCode is a `code` the client sets when no answer came: `network_error` (the request
 * could not be sent or its answer could not be read), `timeout` (no answer within `timeoutMs`),
 * `aborted` (the caller's AbortSignal fired), `invalid_response` (an answer that is not the
 * API's JSON, e.g. from a proxy).
 */
export type ClientErrorCode = "network_error" | "timeout" | "aborted" | "invalid_response";
/** Problem is an RFC 9457 problem details body as agentmem answers it. */
export type Problem = components["schemas"]["Problem"];
/**
 * AgentMemError is every error the client throws. For an answer of the server it carries the
 * problem+json fields (`status`, `code`, `title`, `detail`, `errors`, `type`) and the request id;
 * when no answer came, `status` is 0 and `code` one of ClientErrorCode.
 */
export declare class AgentMemError extends Error {
    readonly name = "AgentMemError";
    /** HTTP status, or 0 when no answer came. */
    readonly status: number;
    /** Machine-readable code: the server's ErrorCode, or a ClientErrorCode. */
    readonly code: ServerErrorCode | ClientErrorCode | (string & {});
    /** Short summary of the status (problem `title`). */
    readonly title: string;
    /** Human-readable explanation (problem `detail`), safe to show to a user. */
    readonly detail: string;
    /** The invalid fields of a 400 answer, else empty. */
    readonly errors: FieldError[];
    /** Problem `type` URI (`about:blank`). */
    readonly type: string;
    /** The request id (answer header `X-Request-Id` or problem `request_id`), for the server log. */
    readonly requestId: string | undefined;
    /** Seconds the server asked to wait (`Retry-After` of a 429 or 503). */
    readonly retryAfter: number | undefined;
    /** The function called, e.g. `commit-turn`. */
    readonly fn: string | undefined;
    constructor(init: {
        status: number;
        code: string;
        title?: string;
        detail?: string;
        errors?: FieldError[];
        type?: string;
        requestId?: string;
        retryAfter?: number;
        fn?: string;
        cause?: unknown;
    });
    /** fieldError returns the message of the invalid field `field` of a 400 answer, if any. */
    fieldError(field: string): string | undefined;
    /** retryable tells whether the same request may succeed later (429, 503, no answer). */
    get retryable(): boolean;
    toJSON(): Record<string, unknown>;
}
/** isAgentMemError tells whether err is an AgentMemError (also across bundles). */
export declare function isAgentMemError(err: unknown): err is AgentMemError;
