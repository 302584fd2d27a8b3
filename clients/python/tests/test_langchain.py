"""The LangChain chat history up to LangChain itself: the dicts `messages_from_dict` reads,
turned back from the ones `message_to_dict` writes, and the method contract (messages,
add_messages, clear) over the real server. Where langchain-core is installed, the adapter is
tested too."""
from __future__ import annotations

import importlib.util
import unittest
import uuid
from typing import Any, Dict, List, Mapping

from agentmem import Client
from agentmem.chat_history import ChatHistory, to_message_in

from .helpers import URL, new_user

HAVE_LANGCHAIN = importlib.util.find_spec("langchain_core") is not None


def lc(kind: str, content: Any, **extra: Any) -> Dict[str, Any]:
    """lc is a message as langchain-core 0.3's message_to_dict writes it."""
    data: Dict[str, Any] = {"content": content, "additional_kwargs": {}, "response_metadata": {}, "type": kind,
                            "name": None, "id": None}
    if kind in ("human", "ai"):
        data["example"] = False
    if kind == "ai":
        data.update({"tool_calls": [], "invalid_tool_calls": [], "usage_metadata": None})
    if kind == "tool":
        data.update({"artifact": None, "status": "success"})
    data.update(extra)
    return {"type": kind, "data": data}


def check_readable(test: unittest.TestCase, stored: Mapping[str, Any]) -> None:
    """check_readable asserts what messages_from_dict needs of a stored message (langchain-core
    0.3 and 1.x): a known type, and data its message class validates."""
    kind = stored["type"]
    test.assertIn(kind, ("human", "ai", "system", "tool"))
    data = stored["data"]
    test.assertEqual(data["type"], kind)
    content = data["content"]
    test.assertTrue(isinstance(content, str) or (isinstance(content, list) and all(
        isinstance(p, (str, dict)) for p in content)), content)
    test.assertIsInstance(data["additional_kwargs"], dict)
    test.assertIsInstance(data["response_metadata"], dict)
    test.assertTrue(data.get("name") is None or isinstance(data["name"], str))
    test.assertTrue(data.get("id") is None or isinstance(data["id"], str))
    if kind == "ai":
        for tc in data.get("tool_calls", []):
            test.assertIsInstance(tc["name"], str)
            test.assertIsInstance(tc["args"], dict)
            test.assertTrue(tc.get("id") is None or isinstance(tc["id"], str))
            test.assertIn(tc.get("type", "tool_call"), ("tool_call",))
    if kind == "tool":
        test.assertIsInstance(data["tool_call_id"], str)


CONVERSATION: List[Dict[str, Any]] = [
    lc("system", "You are a librarian."),
    lc("human", "Find me a book about bees.", id=str(uuid.uuid4())),
    lc("ai", "", tool_calls=[{"name": "search", "args": {"q": "bees"}, "id": "call_1", "type": "tool_call"}]),
    lc("tool", '{"titles": ["The Hive"]}', tool_call_id="call_1"),
    lc("ai", [{"type": "text", "text": "Try"}, {"type": "text", "text": "The Hive."}]),
    lc("human", [{"type": "text", "text": "What is on this cover?"},
                 {"type": "image_url", "image_url": {"url": "https://example.com/hive.jpg"}}]),
]


class ChatHistoryTest(unittest.TestCase):
    def setUp(self) -> None:
        _, token = new_user()
        self.client = Client(URL, token=token)

    def test_message_to_dict_output_becomes_commit_turn_messages(self) -> None:
        msgs = [to_message_in(m) for m in CONVERSATION]
        self.assertEqual([m["role"] for m in msgs], ["system", "user", "assistant", "tool", "assistant", "user"])
        self.assertEqual(msgs[1]["id"], CONVERSATION[1]["data"]["id"])
        self.assertEqual(msgs[2]["tool_calls"], [{"id": "call_1", "type": "function",
                                                   "function": {"name": "search", "arguments": '{"q": "bees"}'}}])
        self.assertEqual(msgs[3]["tool_call_id"], "call_1")
        self.assertEqual(msgs[4]["content"], "Try\nThe Hive.", "text-only parts are the message's text")
        self.assertEqual(msgs[5]["content"], CONVERSATION[5]["data"]["content"], "other parts are kept")
        legacy = to_message_in(lc("ai", "", additional_kwargs={"tool_calls": [
            {"id": "call_2", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}))
        self.assertEqual(legacy["tool_calls"][0]["id"], "call_2")
        self.assertEqual(to_message_in({"type": "chat", "data": {"content": "x", "role": "assistant"}})["role"], "assistant")

    def test_messages_add_messages_clear(self) -> None:
        history = ChatHistory(self.client, agent="librarian")
        self.assertEqual(history.stored_messages(), [], "a new session has no messages")
        history.add_stored_messages(CONVERSATION[:4])
        history.add_stored_messages(CONVERSATION[4:])
        history.add_stored_messages([])
        stored = history.stored_messages()
        self.assertEqual([m["type"] for m in stored], [m["type"] for m in CONVERSATION])
        for m in stored:
            check_readable(self, m)
        self.assertEqual(stored[1]["data"]["id"], CONVERSATION[1]["data"]["id"])
        self.assertEqual(stored[2]["data"]["tool_calls"],
                         [{"name": "search", "args": {"q": "bees"}, "id": "call_1", "type": "tool_call"}])
        self.assertEqual(stored[3]["data"]["tool_call_id"], "call_1")
        self.assertEqual(stored[4]["data"]["content"], "Try\nThe Hive.")
        self.assertEqual(stored[5]["data"]["content"], CONVERSATION[5]["data"]["content"])

        # Another history over the same session id reads the same messages (a new process).
        same = ChatHistory(self.client, history.session_id, agent="librarian")
        self.assertEqual(same.stored_messages(), stored)
        # The active session of (user, agent) is the one a new history without an id finds.
        self.assertEqual(ChatHistory(self.client, agent="librarian").session_id, history.session_id)

        history.clear()
        self.assertEqual(history.stored_messages(), [])
        ChatHistory(self.client, str(uuid.uuid4())).clear()  # never committed to: nothing to clear

    def test_window_size(self) -> None:
        history = ChatHistory(self.client, str(uuid.uuid4()), max_messages=2)
        history.add_stored_messages([lc("human", f"m{i}") for i in range(5)])
        self.assertEqual([m["data"]["content"] for m in history.stored_messages()], ["m3", "m4"])

    @unittest.skipIf(HAVE_LANGCHAIN, "langchain-core is installed: the adapter itself is tested below")
    def test_adapter_needs_langchain_core(self) -> None:
        with self.assertRaises(ImportError) as ctx:
            import agentmem.langchain  # noqa: F401
        self.assertIn("pip install 'agentmem[langchain]'", str(ctx.exception))

    @unittest.skipUnless(HAVE_LANGCHAIN, "langchain-core is not installed here (not installable on these machines)")
    def test_adapter_with_langchain_core(self) -> None:
        from langchain_core.messages import AIMessage, HumanMessage

        from agentmem.langchain import AgentMemChatMessageHistory

        history = AgentMemChatMessageHistory(self.client, str(uuid.uuid4()))
        history.add_messages([HumanMessage("Hi"), AIMessage("Hello")])
        got = history.messages
        self.assertEqual([(type(m).__name__, m.content) for m in got], [("HumanMessage", "Hi"), ("AIMessage", "Hello")])
        history.clear()
        self.assertEqual(history.messages, [])


if __name__ == "__main__":
    unittest.main()
