"""langchain: agentmem as LangChain chat message history (`pip install 'agentmem[langchain]'`).

    from langchain_core.runnables.history import RunnableWithMessageHistory
    from agentmem.langchain import AgentMemChatMessageHistory

    chain = RunnableWithMessageHistory(
        runnable, lambda session_id: AgentMemChatMessageHistory(client, session_id), ...)

The work is ChatHistory's (agentmem.chat_history), in the dicts `messages_from_dict` reads
and `message_to_dict` writes; this module only converts them to LangChain's messages.
"""
# pyright: basic, reportMissingImports=false, reportMissingModuleSource=false
from __future__ import annotations

from typing import Any, List, Optional, Sequence

try:
    from langchain_core.chat_history import BaseChatMessageHistory
    from langchain_core.messages import BaseMessage, message_to_dict, messages_from_dict
except ImportError as exc:  # pragma: no cover - depends on the machine
    raise ImportError("agentmem.langchain needs langchain-core: pip install 'agentmem[langchain]'") from exc

from ._call import RequestOptions
from .chat_history import ChatHistory
from .client import Client
from .session import SessionStore


class AgentMemChatMessageHistory(BaseChatMessageHistory):
    """AgentMemChatMessageHistory is a LangChain chat message history kept by agentmem:
    `messages` reads the session's window, add_messages commits one turn, clear empties the
    session. Without session_id it uses the active session of (user, agent)."""

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
        self.history = ChatHistory(
            client,
            session_id,
            agent=agent,
            store=store,
            max_messages=max_messages,
            max_tokens=max_tokens,
            user_id=user_id,
            tenant_id=tenant_id,
            options=options,
        )

    @property
    def messages(self) -> List[BaseMessage]:  # type: ignore[override]
        """messages are the session's most recent messages, oldest first."""
        stored: Any = self.history.stored_messages()
        return messages_from_dict(stored)

    def add_messages(self, messages: Sequence[BaseMessage]) -> None:
        """add_messages commits the messages as one turn."""
        self.history.add_stored_messages([message_to_dict(m) for m in messages])

    def clear(self) -> None:
        """clear deletes the session's messages and keeps the session."""
        self.history.clear()
