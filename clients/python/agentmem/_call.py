"""_call declares what the generated methods call: one request to one function."""
from __future__ import annotations

from typing import Any, Dict, Mapping, Optional, Protocol, TypedDict


class RequestOptions(TypedDict, total=False):
    """RequestOptions tune one call; every key is optional and defaults to the client's."""

    timeout: float
    """Time limit of one attempt in seconds (0: none)."""
    retries: int
    """Retries after a 429, a 503 or (for calls safe to repeat) no answer."""
    request_id: str
    """X-Request-Id to send (default: a new UUID per call, the same on its retries)."""
    headers: Mapping[str, str]
    """Extra headers for this call."""


class Caller(Protocol):
    """Caller sends one call and answers the decoded JSON body of its answer."""

    def __call__(
        self,
        fn: str,
        body: Dict[str, Any],
        *,
        repeatable: bool,
        scoped: bool,
        options: Optional[RequestOptions],
        idempotent: bool = False,
        idempotency_key: Optional[str] = None,
    ) -> Any: ...


class AsyncCaller(Protocol):
    """AsyncCaller is Caller for the asyncio client."""

    async def __call__(
        self,
        fn: str,
        body: Dict[str, Any],
        *,
        repeatable: bool,
        scoped: bool,
        options: Optional[RequestOptions],
        idempotent: bool = False,
        idempotency_key: Optional[str] = None,
    ) -> Any: ...
