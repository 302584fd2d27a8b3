"""aio: the asyncio client, on httpx (`pip install 'agentmem[async]'`).

AsyncClient has the methods of Client, as coroutines; AsyncChatSession those of ChatSession;
AsyncStreamCommit passes an async model stream through and commits it when it ends.
"""
from __future__ import annotations

import asyncio
import dataclasses
import inspect
import uuid
from typing import (
    Any,
    AsyncIterable,
    AsyncIterator,
    Awaitable,
    Callable,
    Dict,
    Generic,
    List,
    Literal,
    Mapping,
    Optional,
    Sequence,
    TypeVar,
    Union,
    cast,
    overload,
)

try:
    import httpx
except ImportError as exc:  # pragma: no cover - depends on the machine
    raise ImportError("agentmem.aio needs httpx: pip install 'agentmem[async]'") from exc

from ._api import AsyncFunctions
from ._call import RequestOptions
from ._transport import POSITION_HEADER, Plan, Position, Response, Settings, decode, header, plan, wait_before_retry
from .errors import NetworkError, RequestTimeoutError, error_from_answer
from .session import SessionBase, SessionInfo, SessionStore, info
from .stream import StreamAccumulator
from .types import (
    CommitResult,
    ContextAnthropic,
    ContextLangChain,
    ContextOpenAI,
    ContextRaw,
    MemoryIn,
    MessageIn,
    SessionHistory,
)

T = TypeVar("T")

AsyncTokenSource = Union[str, Callable[[bool], Union[Optional[str], Awaitable[Optional[str]]]], None]
"""AsyncTokenSource is a fixed token, or a provider called as TokenProvider is (it may be async)."""


class AsyncClient(AsyncFunctions):
    """AsyncClient is Client for asyncio, over one httpx.AsyncClient (its connection pool).

        async with AsyncClient("http://127.0.0.1:9000", token=access_token) as client:
            await client.commit_turn(session_id=sid, messages=[{"role": "user", "content": "Hi"}])
    """

    def __init__(
        self,
        url: str,
        *,
        token: AsyncTokenSource = None,
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
        http: Optional[httpx.AsyncClient] = None,
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
        self._own_http = http is None
        self.http = http if http is not None else httpx.AsyncClient()
        self._sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
        super().__init__(self._invoke)

    def acting_for(self, user_id: str, tenant_id: Optional[str] = None) -> "AsyncClient":
        """acting_for is this client (a service token's) acting for one user, sharing its
        connection pool."""
        c = AsyncClient.__new__(AsyncClient)
        c.settings = dataclasses.replace(self.settings, user_id=user_id, tenant_id=tenant_id)
        c._position = self._position
        c.http = self.http
        c._own_http = False
        c._sleep = self._sleep
        AsyncFunctions.__init__(c, c._invoke)
        return c

    def session(
        self,
        agent: str = "default",
        *,
        store: Optional[SessionStore] = None,
        user_id: Optional[str] = None,
        tenant_id: Optional[str] = None,
    ) -> "AsyncChatSession":
        """session makes the AsyncChatSession of one agent."""
        return AsyncChatSession(self, agent, store=store, user_id=user_id, tenant_id=tenant_id)

    @property
    def position(self) -> Optional[str]:
        """position is the greatest Agentmem-Position this client was given: sent with every
        request, so that its reads see its writes also from a read replica. Keep it and pass it
        as `position=` to a later client of the same user to carry that over."""
        return self._position.value

    async def token(self, refresh: bool = False) -> Optional[str]:
        """token asks the configured token source."""
        t = self.settings.token
        v = t(refresh) if callable(t) else t
        if inspect.isawaitable(v):
            v = await v
        return v if isinstance(v, str) else None

    async def aclose(self) -> None:
        """aclose closes the connection pool (when the client made it)."""
        if self._own_http:
            await self.http.aclose()

    async def __aenter__(self) -> "AsyncClient":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def call(
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
        """call is Client.call as a coroutine."""
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
        token = await self.token(False)
        refreshed = False
        attempt = 0
        while True:
            try:
                status, reason, raw, headers = await self._send(p, token)
            except NetworkError as err:
                if p.repeatable and attempt < p.retries:
                    await self._sleep(self.settings.backoff(attempt))
                    attempt += 1
                    continue
                raise err
            self._position.keep(header(headers, POSITION_HEADER))
            if 200 <= status < 300:
                return decode(status, raw, headers, p, attempt + 1)
            rid = next((v for k, v in headers.items() if k.lower() == "x-request-id"), p.request_id)
            err = error_from_answer(status, reason, raw, headers, rid, fn)
            if status == 401 and provider and not refreshed:
                refreshed = True
                fresh = await self.token(True)
                if fresh and fresh != token:
                    token = fresh
                    continue
            wait = wait_before_retry(self.settings, p, err, attempt)
            if wait is None:
                raise err
            await self._sleep(wait)
            attempt += 1
            if provider:
                token = await self.token(False)

    async def _send(self, p: Plan, token: Optional[str]) -> "tuple[int, str, bytes, Dict[str, str]]":
        try:
            res = await self.http.post(p.url, content=p.payload, headers=p.headers(token), timeout=p.timeout)
            return res.status_code, res.reason_phrase, res.content, dict(res.headers.items())
        except httpx.TimeoutException as exc:
            raise RequestTimeoutError(f"no answer within {p.timeout} s", request_id=p.request_id, function=p.fn) from exc
        except httpx.TransportError as exc:
            raise NetworkError(
                f"the request could not be completed ({type(exc).__name__})", request_id=p.request_id, function=p.fn
            ) from exc

    async def _invoke(
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
        res = await self.call(
            fn,
            body,
            repeatable=repeatable,
            scoped=scoped,
            options=options,
            idempotent=idempotent,
            idempotency_key=idempotency_key,
        )
        return res.data


class AsyncChatSession(SessionBase):
    """AsyncChatSession is ChatSession for AsyncClient."""

    def __init__(
        self,
        client: AsyncClient,
        agent: str = "default",
        *,
        store: Optional[SessionStore] = None,
        user_id: Optional[str] = None,
        tenant_id: Optional[str] = None,
    ) -> None:
        super().__init__(agent, store, user_id, tenant_id, client.settings.user_id, client.settings.tenant_id)
        self.client = client

    async def key(self) -> Optional[str]:
        """key is the store key (see ChatSession.key)."""
        return self._key(None if self._user_id else await self.client.token(False))

    async def start(self, options: Optional[RequestOptions] = None) -> SessionInfo:
        """start resolves the current session and remembers it (see ChatSession.start)."""
        key = await self.key()
        remembered = self._remembered(key)
        res = await self.client.active_session(
            agent=self.agent, mode="resolve", session_id=remembered, options=options, **self._scope
        )
        self._use(key, res["session_id"])
        return info(res, remembered)

    async def new_session(self, options: Optional[RequestOptions] = None) -> SessionInfo:
        """new_session starts a fresh session, makes it active everywhere and remembers it."""
        key = await self.key()
        remembered = self._remembered(key)
        res = await self.client.active_session(agent=self.agent, mode="new", options=options, **self._scope)
        self._use(key, res["session_id"])
        return info(res, remembered)

    async def activate(self, session_id: str, options: Optional[RequestOptions] = None) -> SessionInfo:
        """activate makes session_id (the user's own, or unused) the active session."""
        key = await self.key()
        remembered = self._remembered(key)
        res = await self.client.active_session(
            agent=self.agent, mode="activate", session_id=session_id, options=options, **self._scope
        )
        self._use(key, res["session_id"])
        return info(res, remembered)

    async def forget(self) -> None:
        """forget removes the remembered id; the server's sessions stay."""
        key = await self.key()
        if key:
            self.store.delete(key)
        self.id = None

    async def session_id(self, options: Optional[RequestOptions] = None) -> str:
        """session_id answers the session in use, starting it first when needed."""
        if self.id is None:
            await self.start(options)
        assert self.id is not None
        return self.id

    async def commit(
        self,
        messages: Sequence[MessageIn],
        *,
        memories: Optional[Sequence[MemoryIn]] = None,
        ttl_seconds: Optional[int] = None,
        extract: Optional[bool] = None,
        answers_only: Optional[bool] = None,
        idempotency_key: Optional[str] = None,
        options: Optional[RequestOptions] = None,
    ) -> CommitResult:
        """commit appends one turn to the session (see ChatSession.commit)."""
        return await self.client.commit_turn(
            session_id=await self.session_id(options),
            agent=self.agent,
            messages=list(messages),
            memories=list(memories) if memories is not None else None,
            ttl_seconds=ttl_seconds,
            extract=extract,
            answers_only=answers_only,
            idempotency_key=idempotency_key,
            options=options,
            **self._scope,
        )

    @overload
    async def context(self, *, format: Optional[Literal["raw"]] = None, **kwargs: Any) -> ContextRaw: ...

    @overload
    async def context(self, *, format: Literal["openai"], **kwargs: Any) -> ContextOpenAI: ...

    @overload
    async def context(self, *, format: Literal["langchain"], **kwargs: Any) -> ContextLangChain: ...

    @overload
    async def context(self, *, format: Literal["anthropic"], **kwargs: Any) -> ContextAnthropic: ...

    async def context(
        self, *, format: Optional[str] = None, **kwargs: Any
    ) -> Union[ContextRaw, ContextOpenAI, ContextLangChain, ContextAnthropic]:
        """context answers get-context for the session (see ChatSession.context)."""
        options = kwargs.get("options")
        args: Dict[str, Any] = {**self._scope, **kwargs}
        if format is not None:
            args["format"] = format
        get: Any = self.client.get_context
        return cast(
            Union[ContextRaw, ContextOpenAI, ContextLangChain, ContextAnthropic],
            await get(session_id=await self.session_id(options), agent=self.agent, **args),
        )

    async def history(
        self,
        *,
        order: Optional[Literal["newest", "oldest"]] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
        since: Optional[str] = None,
        options: Optional[RequestOptions] = None,
    ) -> SessionHistory:
        """history pages the session's messages (newest first by default)."""
        return await self.client.sessions.history(
            session_id=await self.session_id(options),
            agent=self.agent,
            order=order,
            limit=limit,
            cursor=cursor,
            since=since,
            options=options,
            **self._scope,
        )

    def stream(
        self,
        stream: AsyncIterable[T],
        *,
        before: Sequence[MessageIn] = (),
        metadata: Optional[Mapping[str, Any]] = None,
        idempotency_key: Optional[str] = None,
        options: Optional[RequestOptions] = None,
    ) -> "AsyncStreamCommit[T]":
        """stream passes an async model stream through and commits it when it ends."""

        async def commit(messages: List[MessageIn], key: str) -> CommitResult:
            return await self.commit(messages, idempotency_key=key, options=options)

        return AsyncStreamCommit(commit, stream, before=before, metadata=metadata, idempotency_key=idempotency_key)


AsyncCommitFn = Callable[[List[MessageIn], str], Awaitable[CommitResult]]
"""AsyncCommitFn commits messages as one turn with the given Idempotency-Key."""


class AsyncStreamCommit(Generic[T]):
    """AsyncStreamCommit is StreamCommit over an async stream (the SDKs' AsyncStream)."""

    def __init__(
        self,
        commit: AsyncCommitFn,
        stream: AsyncIterable[T],
        *,
        before: Sequence[MessageIn] = (),
        metadata: Optional[Mapping[str, Any]] = None,
        idempotency_key: Optional[str] = None,
    ) -> None:
        self.accumulator = StreamAccumulator()
        self.result: Optional[CommitResult] = None
        self.idempotency_key = idempotency_key or str(uuid.uuid4())
        self._commit = commit
        self._stream = stream
        self._before = list(before)
        self._metadata = dict(metadata or {})
        self._started = False
        self._last = ""

    @property
    def text(self) -> str:
        """text is the answer so far."""
        return self.accumulator.text

    async def __aiter__(self) -> AsyncIterator[T]:
        if self._started:
            raise RuntimeError("agentmem: an AsyncStreamCommit can be iterated once")
        self._started = True
        async for chunk in self._stream:
            self._last = self.accumulator.add(chunk)
            yield chunk
        await self.commit()

    async def texts(self) -> AsyncIterator[str]:
        """texts iterates the stream and yields the text deltas (empty ones left out)."""
        async for _ in self:
            if self._last:
                yield self._last

    def messages(self) -> List[MessageIn]:
        """messages are what commit() stores: `before` and the assistant message."""
        out = list(self._before)
        m = self.accumulator.message(self._metadata)
        if m is not None:
            out.append(m)
        return out

    async def commit(self) -> Optional[CommitResult]:
        """commit stores the turn now (iteration calls it at the stream's end); once only."""
        if self.result is not None:
            return self.result
        msgs = self.messages()
        if not msgs:
            return None
        self.result = await self._commit(msgs, self.idempotency_key)
        return self.result
