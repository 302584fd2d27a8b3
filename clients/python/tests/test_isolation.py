"""Two users' clients never see each other's data, through any function."""
from __future__ import annotations

import unittest
import uuid

import agentmem
from agentmem import Client

from .helpers import URL, new_user


class IsolationTest(unittest.TestCase):
    def test_two_users_never_see_each_other(self) -> None:
        ada_id, ada_token = new_user()
        _, bob_token = new_user()
        ada, bob = Client(URL, token=ada_token), Client(URL, token=bob_token)

        sid = ada.session("support").session_id()
        ada.commit_turn(session_id=sid, agent="support",
                        messages=[{"role": "user", "content": "Ada's secret: the vault code is 4711."}],
                        memories=[{"content": "Ada's vault code is 4711."}])
        mem = ada.memories.create(content="Ada owns a red bicycle.")
        ada.user_memory.set(key="prefs", value={"owner": "ada"})
        ada.user_state.set(mode="halted")
        ada.notes.overwrite(content="# Ada\n")

        # Bob's own scope is empty, whatever he asks.
        self.assertEqual(bob.get_context(session_id=sid, agent="support", query="vault code")["messages"], [])
        self.assertEqual(bob.get_context(session_id=sid, agent="support", query="vault code")["memories"], [])
        self.assertEqual(bob.recall(query="vault code 4711", source="all")["results"], [])
        self.assertEqual(bob.sessions.list()["sessions"], [])
        self.assertEqual(bob.sessions.history()["total"], 0)
        self.assertEqual(bob.memories.list()["items"], [])
        self.assertEqual(bob.user_memory.list()["items"], [])
        self.assertEqual(bob.notes.read()["content"], "")
        with self.assertRaises(agentmem.NotFoundError):
            bob.user_state.get()
        # Ada's ids are missing for Bob, not forbidden: he learns nothing of them.
        with self.assertRaises(agentmem.NotFoundError):
            bob.memories.get(id=mem["id"])
        with self.assertRaises(agentmem.NotFoundError):
            bob.commit_turn(session_id=sid, messages=[{"role": "user", "content": "Bob was here"}])
        with self.assertRaises(agentmem.NotFoundError):
            bob.sessions.reset(session_id=sid)
        with self.assertRaises(agentmem.NotFoundError):
            bob.active_session(mode="activate", session_id=sid, agent="support")
        # Bob's writes under the same names stay his.
        bob.user_memory.set(key="prefs", value={"owner": "bob"})
        bob.memories.create(content="Bob owns a blue bicycle.")
        self.assertEqual(ada.user_memory.get(key="prefs")["value"], {"owner": "ada"})
        self.assertEqual([m["content"] for m in ada.memories.list()["items"]],
                         ["Ada owns a red bicycle.", "Ada's vault code is 4711."])
        self.assertEqual(bob.forget_user()["deleted"]["memories"], 1)
        self.assertEqual(ada.sessions.history(session_id=sid)["total"], 1)
        self.assertNotEqual(ada_id, str(uuid.UUID(int=0)))


if __name__ == "__main__":
    unittest.main()
