"""_transport holds what the synchronous and the asyncio client share: settings, headers,
the retry rules and the shape of an answer."""
from __future__ import annotations

import json
import random
import re
import threading
import uuid
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Dict, Generic, Mapping, Optional, TypeVar, Union, cast

from ._call import RequestOptions
from .errors import AgentMemError

T = TypeVar("T")

TokenProvider = Callable[[bool], Optional[str]]
"""TokenProvider gives the access token of each attempt.

It is called with False before every attempt (so a token refreshed meanwhile is used on
retries) and once with True after a 401, asking for a new token (supabase-py:
`auth.refresh_session()`); answering the same token again ends the call with the 401. None
sends no Authorization header (the server answers 401).
"""

AsyncTokenProvider = Callable[[bool], Awaitable[Optional[str]]]
"""AsyncTokenProvider is TokenProvider for the asyncio client."""

VERSION = "0.1.0"
USER_AGENT = f"agentmem-python/{VERSION}"


@dataclass(frozen=True)
class Settings:
    """Settings are a client's connection settings; each states its default."""

    url: str
    """Base URL: each function is called at `<url>/v1/<name>`."""
    token: Any = None
    """A fixed access token, a TokenProvider, or None."""
    function_urls: Mapping[str, str] = field(default_factory=lambda: dict[str, str]())
    """Per-function URLs (e.g. Lambda Function URLs, served at `/`) that override `url`."""
    retries: int = 3
    """Retries after a 429, a 503 or (for calls safe to repeat) no answer. Default 3."""
    retry_base: float = 0.25
    """First backoff delay in seconds, doubled on each retry, with jitter. Default 0.25."""
    retry_max: float = 8.0
    """Largest backoff delay in seconds. Default 8."""
    max_retry_after: float = 30.0
    """The longest Retry-After (seconds) waited for; a longer one is raised at once. Default 30."""
    timeout: float = 30.0
    """Time limit of one attempt in seconds (0: none). Default 30."""
    headers: Mapping[str, str] = field(default_factory=lambda: dict[str, str]())
    """Extra headers on every request (e.g. an API gateway key)."""
    user_id: Optional[str] = None
    """For service tokens: the user every user-scoped call acts for, unless it names one."""
    tenant_id: Optional[str] = None
    """For service tokens: the tenant of user_id."""

    def endpoint(self, fn: str) -> str:
        """endpoint is the URL of function fn."""
        return self.function_urls.get(fn) or f"{self.url.rstrip('/')}/v1/{fn}"

    def backoff(self, attempt: int) -> float:
        """backoff is the delay before retry attempt+1: jitter over an exponential ceiling."""
        ceiling = min(self.retry_max, self.retry_base * (2**attempt))
        return ceiling / 2 + random.random() * ceiling / 2


@dataclass(frozen=True)
class Response(Generic[T]):
    """Response is one successful answer with what its headers say."""

    status: int
    data: T
    request_id: Optional[str]
    replayed: bool
    """True when a commit's answer was replayed for a repeated Idempotency-Key."""
    attempts: int
    """The attempts made (1 when no retry was needed)."""
    position: Optional[str] = None
    """The answer's Agentmem-Position: the position after its writes, when it has one."""


POSITION_HEADER = "Agentmem-Position"
"""POSITION_HEADER carries a position in the database's write-ahead log (see Position)."""

_POSITION_RE = re.compile(r"^[0-9A-Fa-f]{16}$")


def is_position(s: Optional[str]) -> bool:
    """is_position tells whether s is a position as the server gives them: 16 hexadecimal digits."""
    return s is not None and _POSITION_RE.match(s) is not None


class Position:
    """Position keeps the greatest Agentmem-Position a client's answers gave: the position after
    its writes. It goes with every request, so that a deployment with read replicas answers the
    client's reads only from a replica that has replayed its writes. Positions compare as
    strings (they have one width). Safe to share between threads."""

    def __init__(self, initial: Optional[str] = None) -> None:
        self._lock = threading.Lock()
        self._value: Optional[str] = None
        self.keep(initial)

    @property
    def value(self) -> Optional[str]:
        """value is the greatest position kept, None before any."""
        with self._lock:
            return self._value

    def keep(self, p: Optional[str]) -> None:
        """keep keeps p when it is a position greater than the one kept."""
        if p is None or not is_position(p):
            return
        up = p.upper()
        with self._lock:
            if self._value is None or up > self._value:
                self._value = up


@dataclass
class Plan:
    """Plan is one call, ready to be sent and retried."""

    fn: str
    url: str
    payload: bytes
    repeatable: bool
    retries: int
    timeout: Optional[float]
    request_id: str
    key: Optional[str]
    extra_headers: Dict[str, str]
    position: Optional[str] = None

    def headers(self, token: Optional[str]) -> Dict[str, str]:
        """headers are one attempt's request headers."""
        h = {
            "Content-Type": "application/json",
            "Accept": "application/json, application/problem+json",
            "User-Agent": USER_AGENT,
            "X-Request-Id": self.request_id,
        }
        h.update(self.extra_headers)
        if token:
            h["Authorization"] = f"Bearer {token}"
        if self.key:
            h["Idempotency-Key"] = self.key
        if self.position and header(h, POSITION_HEADER) is None:
            h[POSITION_HEADER] = self.position
        return h


def plan(
    s: Settings,
    fn: str,
    body: Optional[Mapping[str, Any]],
    *,
    repeatable: bool,
    scoped: bool,
    options: Optional[RequestOptions],
    idempotent: bool,
    idempotency_key: Optional[str],
    position: Optional[str] = None,
) -> Plan:
    """plan prepares a call: the body with the client's user (scoped calls), ids and limits."""
    o: RequestOptions = options or {}
    b: Dict[str, Any] = dict(body or {})
    if scoped and s.user_id is not None and "user_id" not in b:
        b["user_id"] = s.user_id
        if s.tenant_id is not None and "tenant_id" not in b:
            b["tenant_id"] = s.tenant_id
    timeout = o.get("timeout", s.timeout)
    extra = dict(s.headers)
    extra.update(o.get("headers", {}))
    return Plan(
        fn=fn,
        url=s.endpoint(fn),
        payload=json.dumps(b, ensure_ascii=False, separators=(",", ":")).encode("utf-8"),
        repeatable=repeatable,
        retries=o.get("retries", s.retries),
        timeout=timeout if timeout and timeout > 0 else None,
        request_id=o.get("request_id") or str(uuid.uuid4()),
        key=(idempotency_key or str(uuid.uuid4())) if idempotent else None,
        extra_headers=extra,
        position=position,
    )


def header(headers: Mapping[str, str], name: str) -> Optional[str]:
    """header reads one header, whatever its case."""
    lname = name.lower()
    for k, v in headers.items():
        if k.lower() == lname:
            return v
    return None


def decode(status: int, body: bytes, headers: Mapping[str, str], p: Plan, attempts: int) -> Response[Any]:
    """decode reads a successful answer."""
    from .errors import InvalidResponseError

    rid = header(headers, "X-Request-Id") or p.request_id
    pos = header(headers, POSITION_HEADER)
    try:
        data = json.loads(body.decode("utf-8")) if body else None
    except (ValueError, UnicodeDecodeError) as exc:
        raise InvalidResponseError("the answer is not JSON", status=status, request_id=rid, function=p.fn) from exc
    return Response(
        status=status,
        data=data,
        request_id=rid,
        replayed=(header(headers, "Idempotent-Replayed") or "").lower() == "true",
        attempts=attempts,
        position=pos if is_position(pos) else None,
    )


def wait_before_retry(s: Settings, p: Plan, err: AgentMemError, attempt: int) -> Optional[float]:
    """wait_before_retry answers how long to wait before retrying a 429 or 503, or None."""
    if err.status not in (429, 503) or attempt >= p.retries:
        return None
    wait = err.retry_after if err.retry_after is not None else s.backoff(attempt)
    return max(wait, 0.0) if wait <= s.max_retry_after else None


def user_from_token(token: Optional[str]) -> Optional[str]:
    """user_from_token reads `sub` from a JWT (without verifying it: the server does)."""
    import base64

    if not token:
        return None
    parts = token.split(".")
    if len(parts) < 2:
        return None
    seg = parts[1] + "=" * (-len(parts[1]) % 4)
    try:
        claims = json.loads(base64.urlsafe_b64decode(seg.encode("ascii")))
    except (ValueError, UnicodeDecodeError):
        return None
    if not isinstance(claims, dict):
        return None
    sub = cast(Dict[str, Any], claims).get("sub")
    return sub if isinstance(sub, str) and sub else None


TokenSource = Union[str, TokenProvider, None]
