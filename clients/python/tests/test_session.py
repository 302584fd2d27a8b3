"""The session lifecycle of a chat server, against the real server."""
from __future__ import annotations

import unittest

from agentmem import Client, MemoryStore, session_key

from .helpers import URL, new_user


class SessionTest(unittest.TestCase):
    def test_start_creates_remembers_and_then_matches(self) -> None:
        uid, token = new_user()
        store = MemoryStore()
        first = Client(URL, token=token).session("support", store=store).start()
        self.assertTrue(first.created)
        self.assertFalse(first.matched)
        self.assertIsNone(first.remembered)
        # The same key as the TypeScript client's localStorage.
        self.assertEqual(store.get(f"agentmem:session:{uid}:support"), first.session_id)
        self.assertEqual(session_key(uid, "support"), f"agentmem:session:{uid}:support")

        again = Client(URL, token=token).session("support", store=store).start()
        self.assertEqual(again.session_id, first.session_id)
        self.assertTrue(again.matched)
        self.assertFalse(again.created)
        self.assertEqual(again.remembered, first.session_id)

    def test_new_session_replaces_the_active_one_on_every_device(self) -> None:
        _, token = new_user()
        phone, laptop = MemoryStore(), MemoryStore()
        on_phone = Client(URL, token=token).session("a", store=phone)
        on_laptop = Client(URL, token=token).session("a", store=laptop)
        first = on_phone.start()
        self.assertEqual(on_laptop.start().session_id, first.session_id)
        fresh = on_laptop.new_session()
        self.assertTrue(fresh.created)
        self.assertNotEqual(fresh.session_id, first.session_id)
        back = Client(URL, token=token).session("a", store=phone).start()
        self.assertEqual(back.remembered, first.session_id)
        self.assertFalse(back.matched)
        self.assertEqual(back.session_id, fresh.session_id)

    def test_activate_forget_commit_context_history(self) -> None:
        _, token = new_user()
        chat = Client(URL, token=token).session("support")
        old = chat.start().session_id
        chat.commit([{"role": "user", "content": "in the old one"}])
        chat.new_session()
        chat.commit([{"role": "user", "content": "Hello"}, {"role": "assistant", "content": "Hi"}],
                    memories=[{"content": "User says hello."}])
        self.assertEqual([m["content"] for m in chat.context()["messages"]], ["Hello", "Hi"])
        self.assertEqual(chat.context(format="openai")["messages"][1], {"role": "assistant", "content": "Hi"})
        self.assertEqual([m["content"] for m in chat.history(order="oldest")["messages"]], ["Hello", "Hi"])
        info = chat.activate(old)
        self.assertEqual(info.session_id, old)
        self.assertEqual([m["content"] for m in chat.context()["messages"]], ["in the old one"])
        chat.forget()
        self.assertIsNone(chat.id)
        self.assertIsNone(chat.store.get(chat.key() or ""))
        self.assertEqual(chat.start().session_id, old, "the server keeps the active session")


if __name__ == "__main__":
    unittest.main()
