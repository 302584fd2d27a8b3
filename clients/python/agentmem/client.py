"""client: the synchronous client, on the standard library only (http.client)."""
from __future__ import annotations

import dataclasses
import http.client
import socket
import time
import urllib.parse
import urllib.request
from typing import TYPE_CHECKING, Any, Callable, Dict, Mapping, Optional, Tuple

from ._api import Functions
from ._call import RequestOptions
from ._transport import (
    POSITION_HEADER,
    Plan,
    Position,
    Response,
    Settings,
    TokenSource,
    decode,
    header,
    plan,
    wait_before_retry,
)
from .errors import NetworkError, RequestTimeoutError, error_from_answer

if TYPE_CHECKING:
    from .session import ChatSession, SessionStore


def _connection(url: str, timeout: Optional[float]) -> Tuple[http.client.HTTPConnection, str]:
    """_connection opens a connection for url, through the proxy the environment names
    (HTTP_PROXY, HTTPS_PROXY, NO_PROXY, as urllib reads them); it answers the request target."""
    u = urllib.parse.urlsplit(url)
    if u.scheme not in ("http", "https") or not u.hostname:
        raise ValueError(f"agentmem: not an http(s) URL: {url}")
    target = (u.path or "/") + (f"?{u.query}" if u.query else "")
    proxy = urllib.request.getproxies().get(u.scheme)
    if proxy and not urllib.request.proxy_bypass(u.hostname):
        pu = urllib.parse.urlsplit(proxy if "://" in proxy else f"http://{proxy}")
        if u.scheme == "https":
            conn: http.client.HTTPConnection = http.client.HTTPSConnection(pu.hostname or "", pu.port, timeout=timeout)
            conn.set_tunnel(u.hostname, u.port)
            return conn, target
        return http.client.HTTPConnection(pu.hostname or "", pu.port, timeout=timeout), url
    if u.scheme == "https":
        return http.client.HTTPSConnection(u.hostname, u.port, timeout=timeout), target
    return http.client.HTTPConnection(u.hostname, u.port, timeout=timeout), target


class Client(Functions):
    """Client calls agentmem's functions: one method per function, one attribute per function
    with ops (`client.user_memory.set(key=..., value=...)`), keyword arguments named as the
    fields of docs/openapi.yaml, answers as plain dicts typed by agentmem.types.

    Commits send an Idempotency-Key that every retry reuses, so a retried commit is stored once;
    429 and 503 are retried after their Retry-After; a token provider is asked for a fresh
    token once after a 401. It is safe to share between threads.

        client = Client("http://127.0.0.1:9000", token=access_token)
        client.commit_turn(session_id=sid, messages=[{"role": "user", "content": "Hi"}])
    """

    def __init__(
        self,
        url: str,
        *,
        token: TokenSource = None,
        function_urls: Optional[Mapping[str, str]] = None,
        retries: int = 3,
        retry_base: float = 0.25,
        retry_max: float = 8.0,
        max_retry_after: float = 30.0,
        timeout: float = 30.0,
        headers: Optional[Mapping[str, str]] = None,
        user_id: Optional[str] = None,
        tenant_id: Optional[str] = None,
        position: Optional[str] = None,
    ) -> None:
        if not url:
            raise ValueError("agentmem: url is required, e.g. http://127.0.0.1:9000")
        self.settings = Settings(
            url=url.rstrip("/"),
            token=token,
            function_urls=dict(function_urls or {}),
            retries=retries,
            retry_base=retry_base,
            retry_max=retry_max,
            max_retry_after=max_retry_after,
            timeout=timeout,
            headers=dict(headers or {}),
            user_id=user_id,
            tenant_id=tenant_id,
        )
        self._position = Position(position)
        self._sleep: Callable[[float], None] = time.sleep
        super().__init__(self._invoke)

    def acting_for(self, user_id: str, tenant_id: Optional[str] = None) -> "Client":
        """acting_for is this client (a service token's) acting for one user: every user-scoped
        call that names no user_id names this one."""
        c = Client.__new__(Client)
        c.settings = dataclasses.replace(self.settings, user_id=user_id, tenant_id=tenant_id)
        c._position = self._position
        c._sleep = self._sleep
        Functions.__init__(c, c._invoke)
        return c

    def session(
        self,
        agent: str = "default",
        *,
        store: Optional["SessionStore"] = None,
        user_id: Optional[str] = None,
        tenant_id: Optional[str] = None,
    ) -> "ChatSession":
        """session makes the ChatSession of one agent: the active session, resolved and committed to."""
        from .session import ChatSession

        return ChatSession(self, agent, store=store, user_id=user_id, tenant_id=tenant_id)

    @property
    def position(self) -> Optional[str]:
        """position is the greatest Agentmem-Position this client was given: sent with every
        request, so that its reads see its writes also from a read replica. Keep it and pass it
        as `position=` to a later client of the same user to carry that over."""
        return self._position.value

    def token(self, refresh: bool = False) -> Optional[str]:
        """token asks the configured token source."""
        t = self.settings.token
        v = t(refresh) if callable(t) else t
        return v if isinstance(v, str) else None

    def close(self) -> None:
        """close releases nothing today (each call opens its own connection); it is there so
        that Client and AsyncClient can be used alike."""

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def call(
        self,
        fn: str,
        body: Optional[Mapping[str, Any]] = None,
        *,
        repeatable: bool = False,
        idempotent: bool = False,
        idempotency_key: Optional[str] = None,
        scoped: bool = False,
        options: Optional[RequestOptions] = None,
    ) -> Response[Any]:
        """call sends body to function fn and answers the whole response (status, request id,
        replayed). repeatable says the call may be sent again after a lost answer; idempotent
        sends an Idempotency-Key (idempotency_key, else a new one) that every retry reuses."""
        p = plan(
            self.settings,
            fn,
            body,
            repeatable=repeatable,
            scoped=scoped,
            options=options,
            idempotent=idempotent,
            idempotency_key=idempotency_key,
            position=self._position.value,
        )
        provider = callable(self.settings.token)
        token = self.token(False)
        refreshed = False
        attempt = 0
        while True:
            try:
                status, reason, raw, headers = self._send(p, token)
            except NetworkError as err:
                if p.repeatable and attempt < p.retries:
                    self._sleep(self.settings.backoff(attempt))
                    attempt += 1
                    continue
                raise err
            self._position.keep(header(headers, POSITION_HEADER))
            if 200 <= status < 300:
                return decode(status, raw, headers, p, attempt + 1)
            rid = next((v for k, v in headers.items() if k.lower() == "x-request-id"), p.request_id)
            err = error_from_answer(status, reason, raw, headers, rid, fn)
            if status == 401 and provider and not refreshed:
                # One more try with a refreshed token, not counted as a retry.
                refreshed = True
                fresh = self.token(True)
                if fresh and fresh != token:
                    token = fresh
                    continue
            wait = wait_before_retry(self.settings, p, err, attempt)
            if wait is None:
                raise err
            self._sleep(wait)
            attempt += 1
            if callable(self.settings.token):
                token = self.token(False)

    def _send(self, p: Plan, token: Optional[str]) -> Tuple[int, str, bytes, Dict[str, str]]:
        conn, target = _connection(p.url, p.timeout)
        try:
            try:
                conn.request("POST", target, body=p.payload, headers=p.headers(token))
            except OSError:
                # A server may answer before it has read the whole body (a 413 from the
                # Content-Length alone) and close: its answer can still be read.
                if conn.sock is None:
                    raise
            res = conn.getresponse()
            return res.status, res.reason, res.read(), dict(res.getheaders())
        except (OSError, http.client.HTTPException) as exc:
            if isinstance(exc, (socket.timeout, TimeoutError)):
                raise RequestTimeoutError(
                    f"no answer within {p.timeout} s", request_id=p.request_id, function=p.fn
                ) from exc
            raise NetworkError(
                f"the request could not be completed ({type(exc).__name__})", request_id=p.request_id, function=p.fn
            ) from exc
        finally:
            conn.close()

    def _invoke(
        self,
        fn: str,
        body: Dict[str, Any],
        *,
        repeatable: bool,
        scoped: bool,
        options: Optional[RequestOptions],
        idempotent: bool = False,
        idempotency_key: Optional[str] = None,
    ) -> Any:
        return self.call(
            fn,
            body,
            repeatable=repeatable,
            scoped=scoped,
            options=options,
            idempotent=idempotent,
            idempotency_key=idempotency_key,
        ).data
