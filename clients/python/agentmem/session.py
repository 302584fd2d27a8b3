"""session: the session lifecycle of a chat server for one (user, agent)."""
from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Dict, Iterable, List, Literal, Mapping, Optional, Protocol, Sequence, TypeVar, Union, cast, overload

from ._call import RequestOptions
from ._transport import user_from_token
from .stream import StreamCommit
from .types import (
    ActiveSession,
    CommitResult,
    ContextAnthropic,
    ContextLangChain,
    ContextOpenAI,
    ContextRaw,
    MemoryIn,
    MessageIn,
    SessionHistory,
)

if TYPE_CHECKING:
    from .client import Client

T = TypeVar("T")

_UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")


def is_uuid(value: object) -> bool:
    """is_uuid tells whether value is a UUID in its usual text form."""
    return isinstance(value, str) and bool(_UUID.match(value))


def session_key(user_id: str, agent: str) -> str:
    """session_key is the store key of the remembered session of (user, agent), the same as the
    TypeScript client's localStorage key."""
    return f"agentmem:session:{user_id}:{agent}"


class SessionStore(Protocol):
    """SessionStore keeps remembered session ids: a dict, Redis, a web framework's session...
    anything with these three methods."""

    def get(self, key: str) -> Optional[str]: ...

    def set(self, key: str, value: str) -> None: ...

    def delete(self, key: str) -> None: ...


class MemoryStore:
    """MemoryStore is a SessionStore in this process's memory (the default)."""

    def __init__(self) -> None:
        self._items: Dict[str, str] = {}
        self._lock = threading.Lock()

    def get(self, key: str) -> Optional[str]:
        with self._lock:
            return self._items.get(key)

    def set(self, key: str, value: str) -> None:
        with self._lock:
            self._items[key] = value

    def delete(self, key: str) -> None:
        with self._lock:
            self._items.pop(key, None)


@dataclass(frozen=True)
class SessionInfo:
    """SessionInfo says which session a ChatSession uses, and how it came to."""

    session_id: str
    agent: str
    matched: bool
    """Whether the remembered id was the active session (False when none was remembered)."""
    created: bool
    """Whether the server created the session for this request."""
    remembered: Optional[str]
    """The id remembered in the store before this call, if any."""
    last_active_at: str


def info(res: ActiveSession, remembered: Optional[str]) -> SessionInfo:
    """info is the SessionInfo of an active-session answer."""
    return SessionInfo(
        session_id=res["session_id"],
        agent=res["agent"],
        matched=res["matched"],
        created=res["created"],
        remembered=remembered,
        last_active_at=res["last_active_at"],
    )


class SessionBase:
    """SessionBase holds what ChatSession and AsyncChatSession share: the agent, the scope and the
    store key."""

    def __init__(
        self,
        agent: str,
        store: Optional[SessionStore],
        user_id: Optional[str],
        tenant_id: Optional[str],
        default_user: Optional[str],
        default_tenant: Optional[str],
    ) -> None:
        self.agent = agent
        self.store: SessionStore = store if store is not None else MemoryStore()
        self.id: Optional[str] = None
        self._user_id = user_id or default_user
        self._scope: Dict[str, Any] = {}
        if user_id:
            self._scope["user_id"] = user_id
            if tenant_id is not None:
                self._scope["tenant_id"] = tenant_id
        # Without user_id, a client made with acting_for() names its user in every call.
        del default_tenant

    def _key(self, token: Optional[str]) -> Optional[str]:
        if not self._user_id:
            self._user_id = user_from_token(token)
        return session_key(self._user_id, self.agent) if self._user_id else None

    def _remembered(self, key: Optional[str]) -> Optional[str]:
        if not key:
            return None
        try:
            v = self.store.get(key)
        except Exception:  # noqa: BLE001 - a broken store must not break the chat
            return None
        return v if is_uuid(v) else None

    def _use(self, key: Optional[str], session_id: str) -> None:
        if key:
            try:
                self.store.set(key, session_id)
            except Exception:  # noqa: BLE001 - the session still works for this process
                pass
        self.id = session_id


class ChatSession(SessionBase):
    """ChatSession is the session lifecycle of a chat server for one (user, agent).

    The current session's id is remembered in a SessionStore under
    `agentmem:session:<user>:<agent>`; start() resolves it with the server (which keeps the
    active session across devices), new_session() starts a fresh one, and commit(), context(),
    history() and stream() act on the session in use, starting it first when needed. With a
    service token, name the user (`client.session("bot", user_id=...)`).
    """

    def __init__(
        self,
        client: "Client",
        agent: str = "default",
        *,
        store: Optional[SessionStore] = None,
        user_id: Optional[str] = None,
        tenant_id: Optional[str] = None,
    ) -> None:
        super().__init__(agent, store, user_id, tenant_id, client.settings.user_id, client.settings.tenant_id)
        self.client = client

    def key(self) -> Optional[str]:
        """key is the store key, with the user taken from the token when not named; None when
        neither says who the user is (then nothing is remembered, and the server decides)."""
        return self._key(None if self._user_id else self.client.token(False))

    def start(self, options: Optional[RequestOptions] = None) -> SessionInfo:
        """start resolves the current session: the remembered id is sent to the server, which
        answers the active session (`matched` tells whether it was the remembered one); that id
        is remembered and used from now on."""
        key = self.key()
        remembered = self._remembered(key)
        res = self.client.active_session(agent=self.agent, mode="resolve", session_id=remembered, options=options, **self._scope)
        self._use(key, res["session_id"])
        return info(res, remembered)

    def new_session(self, options: Optional[RequestOptions] = None) -> SessionInfo:
        """new_session starts a fresh session, makes it active everywhere and remembers it."""
        key = self.key()
        remembered = self._remembered(key)
        res = self.client.active_session(agent=self.agent, mode="new", options=options, **self._scope)
        self._use(key, res["session_id"])
        return info(res, remembered)

    def activate(self, session_id: str, options: Optional[RequestOptions] = None) -> SessionInfo:
        """activate makes session_id (the user's own, or unused) the active session."""
        key = self.key()
        remembered = self._remembered(key)
        res = self.client.active_session(
            agent=self.agent, mode="activate", session_id=session_id, options=options, **self._scope
        )
        self._use(key, res["session_id"])
        return info(res, remembered)

    def forget(self) -> None:
        """forget removes the remembered id (e.g. on sign-out); the server's sessions stay."""
        key = self.key()
        if key:
            self.store.delete(key)
        self.id = None

    def session_id(self, options: Optional[RequestOptions] = None) -> str:
        """session_id answers the session in use, starting it first when needed."""
        if self.id is None:
            self.start(options)
        assert self.id is not None
        return self.id

    def commit(
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
        """commit appends one turn to the session, with an Idempotency-Key its retries reuse
        (idempotency_key: pass your own to make a retry of the whole operation a replay)."""
        return self.client.commit_turn(
            session_id=self.session_id(options),
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
    def context(self, *, format: Optional[Literal["raw"]] = None, **kwargs: Any) -> ContextRaw: ...

    @overload
    def context(self, *, format: Literal["openai"], **kwargs: Any) -> ContextOpenAI: ...

    @overload
    def context(self, *, format: Literal["langchain"], **kwargs: Any) -> ContextLangChain: ...

    @overload
    def context(self, *, format: Literal["anthropic"], **kwargs: Any) -> ContextAnthropic: ...

    def context(
        self, *, format: Optional[str] = None, **kwargs: Any
    ) -> Union[ContextRaw, ContextOpenAI, ContextLangChain, ContextAnthropic]:
        """context answers get-context for the session; kwargs are get-context's other fields
        (max_messages, max_tokens, query, recall_k, since, answers_only, options)."""
        options = kwargs.get("options")
        args: Dict[str, Any] = {**self._scope, **kwargs}
        if format is not None:
            args["format"] = format
        get: Any = self.client.get_context
        return cast(
            Union[ContextRaw, ContextOpenAI, ContextLangChain, ContextAnthropic],
            get(session_id=self.session_id(options), agent=self.agent, **args),
        )

    def history(
        self,
        *,
        order: Optional[Literal["newest", "oldest"]] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
        since: Optional[str] = None,
        options: Optional[RequestOptions] = None,
    ) -> SessionHistory:
        """history pages the session's messages (newest first by default)."""
        return self.client.sessions.history(
            session_id=self.session_id(options),
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
        stream: Iterable[T],
        *,
        before: Sequence[MessageIn] = (),
        metadata: Optional[Mapping[str, Any]] = None,
        idempotency_key: Optional[str] = None,
        options: Optional[RequestOptions] = None,
    ) -> StreamCommit[T]:
        """stream passes a model's stream through and, when it ends, commits `before` and the
        whole answer as one turn (see StreamCommit)."""

        def commit(messages: List[MessageIn], key: str) -> CommitResult:
            return self.commit(messages, idempotency_key=key, options=options)

        return StreamCommit(commit, stream, before=before, metadata=metadata, idempotency_key=idempotency_key)
