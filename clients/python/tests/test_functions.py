"""Every function and op of the API through the synchronous client, against the real server."""
from __future__ import annotations

import datetime
import unittest
import uuid
from typing import Any, Dict, Mapping, Optional, Set, Tuple

import agentmem
from agentmem import Client, OPS
from agentmem._call import RequestOptions
from agentmem._transport import Response

from .helpers import URL, mint, new_user, service_token

CALLED: Set[Tuple[str, Optional[str]]] = set()


class RecordingClient(Client):
    """RecordingClient notes each function and op it calls, so the last test can tell that
    every one of them was called."""

    def call(self, fn: str, body: Optional[Mapping[str, Any]] = None, *, repeatable: bool = False,
             idempotent: bool = False, idempotency_key: Optional[str] = None, scoped: bool = False,
             options: Optional[RequestOptions] = None) -> Response[Any]:
        CALLED.add((fn, (body or {}).get("op")))
        return super().call(fn, body, repeatable=repeatable, idempotent=idempotent,
                            idempotency_key=idempotency_key, scoped=scoped, options=options)


def user_client() -> Tuple[str, Client]:
    uid, token = new_user()
    return uid, RecordingClient(URL, token=token)


class FunctionsTest(unittest.TestCase):
    def setUp(self) -> None:
        self.uid, self.c = user_client()
        self.service = RecordingClient(URL, token=service_token())

    def test_active_session_resolve_new_activate(self) -> None:
        first = self.c.active_session(agent="support")
        self.assertTrue(first["created"])
        again = self.c.active_session(agent="support", session_id=first["session_id"])
        self.assertEqual(again["session_id"], first["session_id"])
        self.assertTrue(again["matched"])
        fresh = self.c.active_session(agent="support", mode="new")
        self.assertNotEqual(fresh["session_id"], first["session_id"])
        back = self.c.active_session(agent="support", mode="activate", session_id=first["session_id"])
        self.assertEqual(back["session_id"], first["session_id"])
        self.assertEqual(self.c.active_session(agent="support")["session_id"], first["session_id"])

    def test_commit_turn_and_get_context_in_every_format(self) -> None:
        sid = str(uuid.uuid4())
        res = self.c.commit_turn(
            session_id=sid,
            agent="demo",
            messages=[
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": "My name is Ada and I prefer metric units."},
                {"role": "assistant", "content": "", "tool_calls": [
                    {"id": "call_1", "type": "function", "function": {"name": "lookup", "arguments": '{"q":"units"}'}}]},
                {"role": "tool", "tool_call_id": "call_1", "content": '{"ok":true}'},
                {"role": "assistant", "content": "Noted, Ada.", "metadata": {"model": "x"}},
            ],
            memories=[{"content": "User prefers metric units.", "metadata": {"kind": "preference"}}],
            ttl_seconds=3600,
        )
        self.assertEqual([m["seq"] for m in res["messages"]], [1, 2, 3, 4, 5])
        self.assertEqual(len(res["memories"]), 1)

        raw = self.c.get_context(session_id=sid, agent="demo", query="which units?", recall_k=3)
        self.assertEqual([m["role"] for m in raw["messages"]], ["system", "user", "assistant", "tool", "assistant"])
        self.assertEqual(raw["messages"][4]["content"], "Noted, Ada.")
        self.assertEqual(raw["memories"][0]["content"], "User prefers metric units.")
        self.assertEqual(raw["usage"]["messages"], 5)

        openai = self.c.get_context(session_id=sid, agent="demo", format="openai")
        self.assertEqual(openai["messages"][2]["tool_calls"][0]["function"]["name"], "lookup")
        anthropic = self.c.get_context(session_id=sid, agent="demo", format="anthropic")
        self.assertEqual(anthropic["system"], "Be brief.")
        self.assertEqual(anthropic["messages"][0]["role"], "user")
        lc = self.c.get_context(session_id=sid, agent="demo", format="langchain", answers_only=True)
        self.assertEqual([m["type"] for m in lc["messages"]], ["system", "human", "ai"])
        since = self.c.get_context(session_id=sid, agent="demo", since="2100-01-01T00:00:00Z", max_messages=10)
        self.assertEqual(since["messages"], [])

    def test_recall_memories_and_messages(self) -> None:
        sid = str(uuid.uuid4())
        self.c.commit_turn(session_id=sid, agent="demo",
                           messages=[{"role": "user", "content": "I keep bees on the roof."}],
                           memories=[{"content": "User keeps bees.", "metadata": {"kind": "hobby"}}])
        mem = self.c.recall(query="bees", agent="demo", filter={"kind": "hobby"}, k=5, mode="hybrid")
        self.assertEqual([r["content"] for r in mem["results"]], ["User keeps bees."])
        both = self.c.recall(query="bees", agent="demo", source="all", mode="text")
        self.assertEqual({r["source"] for r in both["results"]}, {"memory", "message"})

    def test_user_memory_ops(self) -> None:
        um = self.c.user_memory
        self.assertTrue(um.set(key="prefs", value={"units": "metric"})["created"])
        self.assertEqual(um.get(key="prefs")["value"], {"units": "metric"})
        um.set(key="tz", value={"zone": "Europe/Lisbon"})
        self.assertEqual([i["key"] for i in um.list()["items"]], ["prefs", "tz"])
        self.assertEqual(um.delete(key="tz")["deleted"], 1)
        self.assertEqual(um.clear()["deleted"], 1)
        with self.assertRaises(agentmem.NotFoundError):
            um.get(key="prefs")

    def test_user_state_ops(self) -> None:
        self.assertEqual(self.c.user_state.set(mode="halted")["mode"], "halted")
        self.assertEqual(self.c.user_state.get()["mode"], "halted")
        self.assertTrue(self.c.user_state.delete()["deleted"])
        with self.assertRaises(agentmem.NotFoundError):
            self.c.user_state.get()

    def test_notes_ops(self) -> None:
        n = self.c.notes
        self.assertEqual(n.read(agent="demo")["content"], "")
        n.overwrite(agent="demo", content="# Ada\n\n## Preferences\n\n- metric\n")
        n.append(agent="demo", content="## Pets\n\n- a cat\n")
        n.prepend(agent="demo", content="Notes about the user.\n")
        doc = n.replace_section(agent="demo", section="## Preferences", content="- metric units\n")
        self.assertIn("- metric units", doc["content"])
        doc = n.delete_section(agent="demo", section="Pets")
        self.assertNotIn("a cat", doc["content"])
        self.assertTrue(doc["content"].startswith("Notes about the user."))
        self.assertTrue(n.clear(agent="demo")["deleted"])

    def test_sessions_ops(self) -> None:
        s = self.c.sessions
        sid = str(uuid.uuid4())
        res = self.c.commit_turn(session_id=sid, agent="demo", messages=[
            {"role": "user", "content": "one"}, {"role": "assistant", "content": "two"}, {"role": "user", "content": "three"}])
        self.assertEqual(s.set_title(session_id=sid, title="Counting")["title"], "Counting")
        self.assertEqual(s.set_metadata(session_id=sid, metadata={"channel": "email"})["metadata"], {"channel": "email"})
        listed = s.list(agent="demo", limit=10)
        self.assertEqual(listed["sessions"][0]["title"], "Counting")
        self.assertEqual(listed["sessions"][0]["metadata"], {"channel": "email"})
        hist = s.history(session_id=sid, order="oldest", limit=2)
        self.assertEqual([m["content"] for m in hist["messages"]], ["one", "two"])
        self.assertEqual(hist["total"], 3)
        rest = s.history(session_id=sid, order="oldest", limit=2, cursor=hist["next_cursor"])
        self.assertEqual([m["content"] for m in rest["messages"]], ["three"])
        hour_ago = (datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
        everywhere = s.history(since=hour_ago, agent="demo")
        self.assertTrue(all(m["session_id"] == sid for m in everywhere["messages"]))
        self.assertEqual(everywhere["total"], 3)
        self.assertTrue(s.delete_message(session_id=sid, message_id=res["messages"][1]["id"])["deleted"])
        self.assertEqual(s.reset(session_id=sid)["deleted"], 2)
        self.c.commit_turn(session_id=sid, agent="demo", messages=[{"role": "user", "content": "four"}])
        self.assertEqual(s.clear(agent="demo")["deleted"], 1)
        self.assertTrue(s.delete(session_id=sid)["deleted"])
        with self.assertRaises(agentmem.NotFoundError):
            s.delete(session_id=sid)

    def test_memories_ops(self) -> None:
        m = self.c.memories
        created = m.create(content="User lives in Lisbon.", agent="demo", metadata={"kind": "place"})
        self.assertFalse(created["merged"])
        again = m.create(content="User lives in Lisbon.", agent="demo", metadata={"kind": "place"})
        self.assertTrue(again["merged"])
        self.assertEqual(again["id"], created["id"])
        self.assertEqual([x["id"] for x in m.list(agent="demo", limit=5)["items"]], [created["id"]])
        self.assertEqual(m.get(id=created["id"])["content"], "User lives in Lisbon.")
        self.assertEqual(m.update(id=created["id"], content="User lives in Porto.")["content"], "User lives in Porto.")
        self.assertTrue(m.delete(id=created["id"])["deleted"])
        with self.assertRaises(agentmem.NotFoundError):
            m.get(id=created["id"])

    def test_shared_memories(self) -> None:
        tenant = f"py-{uuid.uuid4()}"
        uid = str(uuid.uuid4())
        member = RecordingClient(URL, token=mint(uid, tenant=tenant))
        own = member.memories.create(content="The user parks a bicycle at the Lisbon office.")
        shared = self.service.memories.create(shared=True, tenant_id=tenant, content="The Lisbon office has bicycle parking.")
        found = {h["id"]: h.get("shared", False) for h in member.recall(query="Lisbon office bicycle parking")["results"]}
        self.assertEqual(found, {own["id"]: False, shared["id"]: True})
        alone = member.recall(query="Lisbon office bicycle parking", include_shared=False)["results"]
        self.assertEqual([h["id"] for h in alone], [own["id"]])
        self.assertEqual([x["id"] for x in member.memories.list(shared=True)["items"]], [shared["id"]])
        with self.assertRaises(agentmem.ForbiddenError):
            member.memories.delete(id=shared["id"])
        self.assertNotIn(shared["id"], [h["id"] for h in self.c.recall(query="Lisbon office bicycle parking")["results"]])
        self.assertTrue(self.service.memories.delete(id=shared["id"], shared=True, tenant_id=tenant)["deleted"])

    def test_knowledge_ops(self) -> None:
        source = f"returns-{uuid.uuid4()}.md"
        ingested = self.service.knowledge.ingest(source=source, content="Refunds are paid within five days.",
                                                 metadata={"team": "support"})
        self.assertGreaterEqual(ingested["chunks"], 1)
        hits = self.c.knowledge.search(query="how long do refunds take?", k=3)
        self.assertIn(source, [h["source"] for h in hits["results"]])
        self.assertGreaterEqual(self.service.knowledge.delete(source=source)["deleted"], 1)

    def test_forget_user(self) -> None:
        self.c.user_memory.set(key="k", value={"v": 1})
        self.c.commit_turn(session_id=str(uuid.uuid4()), messages=[{"role": "user", "content": "hi"}])
        gone = self.service.forget_user(user_id=self.uid)
        self.assertEqual(gone["deleted"]["messages"], 1)
        self.assertEqual(self.c.user_memory.list()["items"], [])

    def test_sweep_expired_and_jobs(self) -> None:
        swept = self.service.sweep_expired(dry_run=True, batch_size=100, max_duration_ms=5000)
        self.assertIn("messages", swept["deleted"])
        sid = str(uuid.uuid4())
        self.c.commit_turn(session_id=sid, messages=[{"role": "user", "content": "hi"}])
        intent = self.c.intents(type="syncSession", session_id=sid)
        self.assertEqual(intent["session_id"], sid)
        self.assertEqual(intent["type"], "syncSession")
        listed = self.service.jobs.list(limit=5)
        self.assertIn("jobs", listed)
        with self.assertRaises(agentmem.NotFoundError):
            self.service.jobs.get(id=str(uuid.uuid4()))
        with self.assertRaises(agentmem.NotFoundError):
            self.service.jobs.retry(id=str(uuid.uuid4()))
        self.assertEqual(self.service.jobs.purge(status="dead", older_than_seconds=86400 * 365 * 9)["deleted"], 0)
        processed = self.service.process_jobs(limit=10, max_duration_ms=2000)
        self.assertIn("processed", processed)

    def test_zz_every_function_and_op_was_called(self) -> None:
        ran = {name for name in dir(self) if name.startswith("test_") and name != "test_zz_every_function_and_op_was_called"}
        if not ran <= RAN:
            self.skipTest("run with the whole class to check coverage")
        expected = set()
        for fn in agentmem.FUNCTIONS:
            for op in OPS.get(fn, (None,)):
                expected.add((fn, op))
        self.assertEqual(expected - CALLED, set(), "functions or ops no test called")

    def run(self, result: Any = None) -> Any:
        out = super().run(result)
        RAN.add(self._testMethodName)
        return out


RAN: Set[str] = set()
_ = Dict
