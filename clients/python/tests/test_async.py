"""The asyncio client (httpx), against the real server; skipped where httpx is missing."""
from __future__ import annotations

import importlib.util
import unittest
import uuid
from typing import Any, AsyncIterator, Dict, List, Optional

import agentmem

from .helpers import URL, Proxy, mint, new_user
from .test_stream import PIECES, anthropic_events, openai_chunks

HAVE_HTTPX = importlib.util.find_spec("httpx") is not None
SKIP = "httpx is not installed: the asyncio client is not tested (pip install httpx, or apt-get install python3-httpx)"


@unittest.skipUnless(HAVE_HTTPX, SKIP)
class AsyncClientTest(unittest.IsolatedAsyncioTestCase):
    async def asyncSetUp(self) -> None:
        import asyncio

        from agentmem.aio import AsyncClient

        # The test loop runs in debug mode, which reports the proxy's blocking start as slow.
        asyncio.get_running_loop().slow_callback_duration = 5
        self.uid, self.token = new_user()
        self.client = AsyncClient(URL, token=self.token, retry_base=0.01)
        self.addAsyncCleanup(self.client.aclose)

    async def test_functions_and_ops(self) -> None:
        c = self.client
        sid = str(uuid.uuid4())
        res = await c.commit_turn(session_id=sid, agent="demo", messages=[
            {"role": "user", "content": "I prefer metric units."}, {"role": "assistant", "content": "Noted."}],
            memories=[{"content": "User prefers metric units."}])
        self.assertEqual([m["seq"] for m in res["messages"]], [1, 2])
        ctx = await c.get_context(session_id=sid, agent="demo", query="units", format="anthropic")
        self.assertEqual(ctx["messages"][0]["role"], "user")
        self.assertEqual((await c.recall(query="metric", agent="demo"))["results"][0]["content"], "User prefers metric units.")
        await c.user_memory.set(key="prefs", value={"units": "metric"})
        self.assertEqual((await c.user_memory.get(key="prefs"))["value"], {"units": "metric"})
        await c.notes.append(content="- metric\n")
        self.assertEqual((await c.notes.read())["content"], "- metric\n")
        self.assertEqual((await c.sessions.history(session_id=sid))["total"], 2)
        with self.assertRaises(agentmem.NotFoundError) as err:
            await c.memories.get(id=str(uuid.uuid4()))
        self.assertTrue(err.exception.request_id)
        with self.assertRaises(agentmem.ValidationError) as bad:
            await c.commit_turn(session_id=sid, messages=[{"role": "robot", "content": "x"}])
        self.assertEqual(bad.exception.field, "messages[0].role")

    async def test_commit_retried_after_a_dropped_connection_is_stored_once(self) -> None:
        from agentmem.aio import AsyncClient

        proxy = Proxy(lambda req, n: "drop-answer" if n == 1 else "forward")
        self.addCleanup(proxy.close)
        async with AsyncClient(proxy.url, token=self.token, retry_base=0.01) as c:
            sid = str(uuid.uuid4())
            res = await c.call("commit-turn", {"session_id": sid, "messages": [{"role": "user", "content": "once"}]},
                               repeatable=True, idempotent=True)
        self.assertTrue(res.replayed)
        self.assertEqual(len({r["headers"]["idempotency-key"] for r in proxy.requests}), 1)
        self.assertEqual(len(proxy.requests), 2)
        self.assertEqual((await self.client.sessions.history(session_id=sid))["total"], 1)

    async def test_async_token_provider_refreshed_after_a_401(self) -> None:
        from agentmem.aio import AsyncClient

        asked: List[bool] = []

        async def provider(refresh: bool) -> Optional[str]:
            asked.append(refresh)
            return self.token if refresh else mint(self.uid, ttl=-60)

        async with AsyncClient(URL, token=provider) as c:
            await c.user_state.set(mode="active")
        self.assertEqual(asked, [False, True])

    async def test_session_and_stream(self) -> None:
        chat = self.client.session("stream")
        info = await chat.start()
        self.assertTrue(info.created)

        async def stream(events: List[Dict[str, Any]]) -> AsyncIterator[Dict[str, Any]]:
            for e in events:
                yield e

        reply = chat.stream(stream(openai_chunks(PIECES)), before=[{"role": "user", "content": "q1"}])
        self.assertEqual([t async for t in reply.texts()], PIECES)
        reply2 = chat.stream(stream(anthropic_events(PIECES)), before=[{"role": "user", "content": "q2"}])
        async for _ in reply2:
            pass
        msgs = (await chat.history(order="oldest"))["messages"]
        self.assertEqual([m["content"] for m in msgs], ["q1", "".join(PIECES), "q2", "".join(PIECES)])
        self.assertEqual((await chat.context(format="langchain"))["messages"][1]["type"], "ai")


if __name__ == "__main__":
    unittest.main()
