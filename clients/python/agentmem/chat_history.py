"""chat_history: a session as a list of LangChain stored messages, without LangChain.

ChatHistory is everything agentmem.langchain's AgentMemChatMessageHistory does, in the stored
form LangChain reads and writes (`messages_from_dict`, `message_to_dict`): the adapter only
converts between these dicts and LangChain's message objects, so this module works, and is
tested, where langchain-core is not installed.
"""
from __future__ import annotations

import json
from typing import Any, Dict, List, Mapping, Optional, Sequence, cast

from ._call import RequestOptions
from .client import Client
from .errors import NotFoundError
from .session import ChatSession, MemoryStore, SessionStore, is_uuid
from .types import ContentPart, LangChainMessage, MessageContent, MessageIn, ToolCall

_ROLES = {"human": "user", "ai": "assistant", "system": "system", "tool": "tool"}


def _content(c: Any) -> MessageContent:
    """_content is a LangChain content as commit-turn takes it: a string, or parts. Parts that
    are all text are joined by newlines (the message's text, as the contract defines it)."""
    if isinstance(c, str):
        return c
    parts: List[ContentPart] = []
    for p in cast(List[Any], c or []):
        if isinstance(p, str):
            parts.append({"type": "text", "text": p})
        elif isinstance(p, Mapping):
            parts.append(cast(ContentPart, dict(cast(Mapping[str, Any], p))))
    if not parts:
        return ""
    if all(p.get("type") == "text" and isinstance(p.get("text"), str) for p in parts):
        return "\n".join(str(p.get("text")) for p in parts)
    return parts


def to_message_in(stored: Mapping[str, Any]) -> MessageIn:
    """to_message_in maps one LangChain stored message (`{"type", "data"}`, as
    `message_to_dict` writes it) to a message of commit-turn."""
    kind = stored.get("type")
    data = cast(Mapping[str, Any], stored.get("data") or {})
    role = _ROLES.get(str(kind))
    if role is None:
        # ChatMessage ("chat") carries its own role; anything else speaks as the user.
        r = data.get("role")
        role = r if r in ("assistant", "system", "tool") else "user"
    out: MessageIn = {"role": cast(Any, role), "content": _content(data.get("content", ""))}
    name = data.get("name")
    if isinstance(name, str) and name:
        out["name"] = name
    mid = data.get("id")
    if is_uuid(mid):
        out["id"] = cast(str, mid)
    if role == "assistant":
        calls: List[ToolCall] = []
        for i, tc in enumerate(cast(List[Mapping[str, Any]], data.get("tool_calls") or [])):
            calls.append({
                "id": str(tc.get("id") or f"call_{i}"),
                "type": "function",
                "function": {"name": str(tc.get("name") or ""), "arguments": json.dumps(tc.get("args") or {})},
            })
        if not calls:
            # Messages from before LangChain's tool_calls field keep OpenAI's in additional_kwargs.
            kwargs = cast(Mapping[str, Any], data.get("additional_kwargs") or {})
            for tc in cast(List[Mapping[str, Any]], kwargs.get("tool_calls") or []):
                fn = cast(Mapping[str, Any], tc.get("function") or {})
                calls.append({
                    "id": str(tc.get("id") or f"call_{len(calls)}"),
                    "type": "function",
                    "function": {"name": str(fn.get("name") or ""), "arguments": str(fn.get("arguments") or "{}")},
                })
        if calls:
            out["tool_calls"] = calls
    if role == "tool":
        out["tool_call_id"] = str(data.get("tool_call_id") or "")
    return out


class ChatHistory:
    """ChatHistory is one session's messages in LangChain's stored form.

    stored_messages() reads the session's window (get-context, format `langchain`),
    add_stored_messages() commits messages as one turn (commit-turn, with an Idempotency-Key),
    clear() empties the session and keeps it (sessions reset). Without session_id it uses the
    active session of (user, agent), resolved on first use.
    """

    def __init__(
        self,
        client: Client,
        session_id: Optional[str] = None,
        *,
        agent: str = "default",
        store: Optional[SessionStore] = None,
        max_messages: int = 100,
        max_tokens: Optional[int] = None,
        user_id: Optional[str] = None,
        tenant_id: Optional[str] = None,
        options: Optional[RequestOptions] = None,
    ) -> None:
        self.client = client
        self.agent = agent
        self.max_messages = max_messages
        self.max_tokens = max_tokens
        self.options = options
        self._session_id = session_id
        self._scope: Dict[str, Any] = {}
        if user_id:
            self._scope["user_id"] = user_id
            if tenant_id is not None:
                self._scope["tenant_id"] = tenant_id
        self._session: Optional[ChatSession] = None
        if session_id is None:
            self._session = ChatSession(
                client, agent, store=store if store is not None else MemoryStore(), user_id=user_id, tenant_id=tenant_id
            )

    @property
    def session_id(self) -> str:
        """session_id is the session this history reads and writes."""
        if self._session_id is not None:
            return self._session_id
        assert self._session is not None
        return self._session.session_id(self.options)

    def stored_messages(self) -> List[LangChainMessage]:
        """stored_messages are the session's most recent messages, oldest first."""
        ctx = self.client.get_context(
            session_id=self.session_id,
            agent=self.agent,
            max_messages=self.max_messages,
            max_tokens=self.max_tokens,
            format="langchain",
            options=self.options,
            **self._scope,
        )
        return ctx["messages"]

    def add_stored_messages(self, messages: Sequence[Mapping[str, Any]]) -> None:
        """add_stored_messages commits the messages as one turn (nothing for none)."""
        if not messages:
            return
        self.client.commit_turn(
            session_id=self.session_id,
            agent=self.agent,
            messages=[to_message_in(m) for m in messages],
            options=self.options,
            **self._scope,
        )

    def clear(self) -> None:
        """clear deletes the session's messages and keeps the session."""
        try:
            self.client.sessions.reset(session_id=self.session_id, options=self.options, **self._scope)
        except NotFoundError:
            pass  # a session never committed to has nothing to clear
