"""errors: one exception class per problem code of the API, all under AgentMemError.

A server answer that is an error becomes the class of its `code` (docs/openapi.yaml,
ErrorCode), so callers catch what they can handle (`except NotFoundError`) and let the rest
through; every error carries the request id that finds it in the server's log.
"""
from __future__ import annotations

import json
from typing import Any, Dict, List, Mapping, Optional, Type, cast

from .types import FieldError


class AgentMemError(Exception):
    """AgentMemError is the base of every error the client raises.

    For an answer of the server it carries the problem+json fields; when no answer came,
    `status` is 0 and `code` is one of the client's codes (`network_error`, `timeout`,
    `invalid_response`).
    """

    #: code is the problem code this class stands for (the base: any code).
    default_code = "internal"

    def __init__(
        self,
        detail: str,
        *,
        status: int = 0,
        code: Optional[str] = None,
        title: str = "",
        errors: Optional[List[FieldError]] = None,
        type: str = "about:blank",
        request_id: Optional[str] = None,
        retry_after: Optional[float] = None,
        function: Optional[str] = None,
    ) -> None:
        self.status = status
        self.code: str = code or self.default_code
        self.title = title
        self.detail = detail
        self.errors: List[FieldError] = list(errors or [])
        self.type = type
        self.request_id = request_id
        self.retry_after = retry_after
        self.function = function
        prefix = f"{status} {self.code}" if status else self.code
        where = f" ({function}, request {request_id})" if request_id else ""
        super().__init__(f"{prefix}: {detail}{where}")

    def field_error(self, field: str) -> Optional[str]:
        """field_error answers the message about one field of a 400 answer, if any."""
        for e in self.errors:
            if e.get("field") == field:
                return e.get("message")
        return None

    @property
    def retryable(self) -> bool:
        """retryable tells whether the same request may succeed later (429, 503, no answer)."""
        return self.status in (429, 503) or self.code in ("network_error", "timeout")

    def to_dict(self) -> Dict[str, Any]:
        """to_dict gives the problem's fields, for a log or an answer of one's own."""
        return {
            "status": self.status,
            "code": self.code,
            "title": self.title,
            "detail": self.detail,
            "errors": self.errors,
            "request_id": self.request_id,
            "retry_after": self.retry_after,
        }


class ValidationError(AgentMemError):
    """ValidationError is 400 invalid_request: the body was refused and nothing changed.

    `field` is the JSON path of the first invalid field (e.g. `messages[2].role`), `errors`
    all of them.
    """

    default_code = "invalid_request"

    @property
    def field(self) -> Optional[str]:
        """field is the path of the first invalid field, if the answer names one."""
        return self.errors[0].get("field") if self.errors else None


class UnauthenticatedError(AgentMemError):
    """UnauthenticatedError is 401: no token, or one expired or badly signed."""

    default_code = "unauthenticated"


class ForbiddenError(AgentMemError):
    """ForbiddenError is 403: a valid token whose role may not do this."""

    default_code = "forbidden"


class NotFoundError(AgentMemError):
    """NotFoundError is 404: the resource does not exist for this caller."""

    default_code = "not_found"


class MethodNotAllowedError(AgentMemError):
    """MethodNotAllowedError is 405: anything but POST or OPTIONS."""

    default_code = "method_not_allowed"


class ConflictError(AgentMemError):
    """ConflictError is 409: an idempotency key reused with another body, or a duplicate in flight."""

    default_code = "conflict"


class PayloadTooLargeError(AgentMemError):
    """PayloadTooLargeError is 413: a body over 1 MiB."""

    default_code = "payload_too_large"


class RequestHeaderFieldsTooLargeError(AgentMemError):
    """RequestHeaderFieldsTooLargeError is 431: headers over the server's limit."""

    default_code = "request_header_fields_too_large"


class UnsupportedMediaTypeError(AgentMemError):
    """UnsupportedMediaTypeError is 415: a body that is not JSON."""

    default_code = "unsupported_media_type"


class RateLimitedError(AgentMemError):
    """RateLimitedError is 429; `retry_after` says how many seconds to wait."""

    default_code = "rate_limited"


class UnavailableError(AgentMemError):
    """UnavailableError is 503: the database or a budget ran out; nothing was half-written."""

    default_code = "unavailable"


class InternalError(AgentMemError):
    """InternalError is 500: a bug on the server, logged there under the request id."""

    default_code = "internal"


class NetworkError(AgentMemError):
    """NetworkError is a call that got no answer: refused, reset or cut connection."""

    default_code = "network_error"


class RequestTimeoutError(NetworkError):
    """RequestTimeoutError is a call that got no answer within its time limit."""

    default_code = "timeout"


class InvalidResponseError(AgentMemError):
    """InvalidResponseError is an answer that is not the API's JSON (a proxy's page, say)."""

    default_code = "invalid_response"


#: ERRORS maps each problem code of the API to its class.
ERRORS: Dict[str, Type[AgentMemError]] = {
    cls.default_code: cls
    for cls in (
        ValidationError,
        UnauthenticatedError,
        ForbiddenError,
        NotFoundError,
        MethodNotAllowedError,
        ConflictError,
        PayloadTooLargeError,
        RequestHeaderFieldsTooLargeError,
        UnsupportedMediaTypeError,
        RateLimitedError,
        UnavailableError,
        InternalError,
    )
}

_STATUS_CODES = {
    400: "invalid_request",
    401: "unauthenticated",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    409: "conflict",
    413: "payload_too_large",
    415: "unsupported_media_type",
    429: "rate_limited",
    431: "request_header_fields_too_large",
    503: "unavailable",
}


def parse_retry_after(value: Optional[str], now: Optional[float] = None) -> Optional[float]:
    """parse_retry_after reads a Retry-After header (seconds or an HTTP date) as seconds."""
    if value is None or not value.strip():
        return None
    v = value.strip()
    if v.isdigit():
        return float(v)
    from email.utils import parsedate_to_datetime
    import time

    try:
        when = parsedate_to_datetime(v).timestamp()
    except (TypeError, ValueError):
        return None
    return max(0.0, when - (time.time() if now is None else now))


def error_from_answer(
    status: int,
    reason: str,
    body: bytes,
    headers: Mapping[str, str],
    request_id: str,
    function: str,
) -> AgentMemError:
    """error_from_answer turns an error answer, problem+json or not, into its class."""
    problem: Dict[str, Any] = {}
    try:
        v = json.loads(body.decode("utf-8")) if body else None
        if isinstance(v, dict):
            problem = cast(Dict[str, Any], v)
    except (ValueError, UnicodeDecodeError):
        pass  # not JSON: a proxy's page, say

    def text(key: str) -> Optional[str]:
        v = problem.get(key)
        return v if isinstance(v, str) else None

    code = text("code") or _STATUS_CODES.get(status) or ("internal" if status >= 500 else "invalid_response")
    cls = ERRORS.get(code, AgentMemError)
    errors: List[FieldError] = []
    raw = problem.get("errors")
    if isinstance(raw, list):
        for item in cast(List[Any], raw):
            if not isinstance(item, dict):
                continue
            e = cast(Dict[str, Any], item)
            f, m = e.get("field"), e.get("message")
            if isinstance(f, str) and isinstance(m, str):
                errors.append({"field": f, "message": m})
    retry_after = None
    for k, v in headers.items():
        if k.lower() == "retry-after":
            retry_after = parse_retry_after(v)
    return cls(
        text("detail") or reason or f"HTTP {status}",
        status=status,
        code=code,
        title=text("title") or reason,
        errors=errors,
        type=text("type") or "about:blank",
        request_id=text("request_id") or request_id,
        retry_after=retry_after,
        function=function,
    )
