"""Retries, idempotency keys, token refresh and service tokens, against the real server (a local
proxy in front of it drops answers or answers 503 where a test needs it)."""
from __future__ import annotations

import unittest
import uuid
from types import SimpleNamespace
from typing import Any, List, Optional

import agentmem
from agentmem import Client

from .helpers import URL, Proxy, mint, new_user, problem, service_token


def history_total(token: str, session_id: str) -> int:
    return Client(URL, token=token).sessions.history(session_id=session_id)["total"]


class TransportTest(unittest.TestCase):
    def setUp(self) -> None:
        self.uid, self.token = new_user()

    def proxy(self, handle: Any) -> Proxy:
        p = Proxy(handle)
        self.addCleanup(p.close)
        return p

    def test_commit_retried_after_a_dropped_connection_is_stored_once(self) -> None:
        proxy = self.proxy(lambda req, n: "drop-answer" if n == 1 else "forward")
        c = Client(proxy.url, token=self.token, retry_base=0.01)
        sid = str(uuid.uuid4())
        res = c.call("commit-turn", {"session_id": sid, "messages": [
            {"role": "user", "content": "Hello"}, {"role": "assistant", "content": "Hi"}]},
            repeatable=True, idempotent=True)
        self.assertEqual(len(proxy.requests), 2, "the lost answer was retried")
        keys = {r["headers"]["idempotency-key"] for r in proxy.requests}
        self.assertEqual(len(keys), 1, "every retry sends the same Idempotency-Key")
        self.assertEqual(len({r["headers"]["x-request-id"] for r in proxy.requests}), 1)
        self.assertTrue(res.replayed, "the server replayed the first commit's answer")
        self.assertEqual(res.attempts, 2)
        self.assertEqual(history_total(self.token, sid), 2, "the turn is stored once")

    def test_chat_session_commit_through_a_dropped_connection(self) -> None:
        drops = {"n": 0}

        def handle(req: Any, n: int) -> str:
            if req["path"] == "/v1/commit-turn" and drops["n"] < 2:
                drops["n"] += 1
                return "drop-answer"
            return "forward"

        proxy = self.proxy(handle)
        chat = Client(proxy.url, token=self.token, retry_base=0.01).session("support")
        res = chat.commit([{"role": "user", "content": "once"}])
        self.assertEqual(len(res["messages"]), 1)
        commits = [r for r in proxy.requests if r["path"] == "/v1/commit-turn"]
        self.assertEqual(len(commits), 3)
        self.assertEqual(len({r["headers"]["idempotency-key"] for r in commits}), 1)
        self.assertEqual(history_total(self.token, chat.session_id()), 1)

    def test_a_call_not_safe_to_repeat_is_not_retried_after_a_lost_answer(self) -> None:
        proxy = self.proxy(lambda req, n: "drop-answer")
        c = Client(proxy.url, token=self.token, retry_base=0.01)
        with self.assertRaises(agentmem.NetworkError):
            c.notes.append(content="- once\n")
        self.assertEqual(len(proxy.requests), 1)
        self.assertEqual(Client(URL, token=self.token).notes.read()["content"], "- once\n")

    def test_503_is_retried_after_retry_after_with_the_same_key(self) -> None:
        busy = {"status": 503, "headers": {"Retry-After": "1"}, "body": problem(503, "unavailable", "busy")}
        proxy = self.proxy(lambda req, n: busy if n == 1 else "forward")
        c = Client(proxy.url, token=self.token)
        sid = str(uuid.uuid4())
        c.commit_turn(session_id=sid, messages=[{"role": "user", "content": "later"}], idempotency_key="turn-1")
        self.assertEqual([r["headers"]["idempotency-key"] for r in proxy.requests], ["turn-1", "turn-1"])
        self.assertGreaterEqual(proxy.requests[1]["at"] - proxy.requests[0]["at"], 0.9, "waited for Retry-After")
        self.assertEqual(history_total(self.token, sid), 1)

    def test_429_beyond_max_retry_after_is_raised_at_once(self) -> None:
        limited = {"status": 429, "headers": {"Retry-After": "120"}, "body": problem(429, "rate_limited", "slow down")}
        proxy = self.proxy(lambda req, n: limited)
        c = Client(proxy.url, token=self.token, max_retry_after=30)
        with self.assertRaises(agentmem.RateLimitedError) as ctx:
            c.recall(query="x")
        self.assertEqual(ctx.exception.retry_after, 120)
        self.assertEqual(len(proxy.requests), 1)

    def test_token_provider_is_refreshed_once_after_a_401(self) -> None:
        asked: List[bool] = []
        expired = mint(self.uid, ttl=-60)

        def provider(refresh: bool) -> Optional[str]:
            asked.append(refresh)
            return self.token if refresh else expired

        c = Client(URL, token=provider)
        c.user_memory.set(key="k", value={"v": 1})
        self.assertEqual(asked, [False, True])

        stuck: List[bool] = []

        def same(refresh: bool) -> Optional[str]:
            stuck.append(refresh)
            return expired

        with self.assertRaises(agentmem.UnauthenticatedError):
            Client(URL, token=same).user_memory.get(key="k")
        self.assertEqual(stuck, [False, True], "one refresh, then the 401")

    def test_supabase_session_as_token_provider(self) -> None:
        # The shapes supabase-py answers: get_session() a Session, refresh_session() an AuthResponse.
        calls: List[str] = []

        class Auth:
            def get_session(self) -> Any:
                calls.append("get")
                return SimpleNamespace(access_token=mint(self_uid, ttl=-60))

            def refresh_session(self) -> Any:
                calls.append("refresh")
                return SimpleNamespace(session=SimpleNamespace(access_token=mint(self_uid)))

        self_uid = self.uid
        c = Client(URL, token=agentmem.supabase_token(SimpleNamespace(auth=Auth())))
        self.assertEqual(c.user_state.set(mode="active")["mode"], "active")
        self.assertEqual(calls, ["get", "refresh"])

    def test_service_token_acting_for_a_user(self) -> None:
        service = Client(URL, token=service_token())
        ada = service.acting_for(self.uid)
        sid = str(uuid.uuid4())
        ada.commit_turn(session_id=sid, messages=[{"role": "user", "content": "from the server"}])
        ada.user_memory.set(key="prefs", value={"units": "metric"})
        own = Client(URL, token=self.token)
        self.assertEqual(own.get_context(session_id=sid)["messages"][0]["content"], "from the server")
        self.assertEqual(own.user_memory.get(key="prefs")["value"], {"units": "metric"})
        service.acting_for(self.uid, tenant_id="").user_state.set(mode="halted")
        self.assertEqual(own.user_state.get()["mode"], "halted")
        # A service client's chat session names the user in every call.
        chat = service.session("bot", user_id=self.uid)
        chat.commit([{"role": "user", "content": "hi"}])
        self.assertEqual(own.active_session(agent="bot")["session_id"], chat.session_id())


if __name__ == "__main__":
    unittest.main()
