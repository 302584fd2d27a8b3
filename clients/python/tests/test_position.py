"""Agentmem-Position: a client keeps the greatest position an answer gives and sends it with
every later request, so that a deployment with read replicas answers its reads from a replica
only once that has replayed its writes. The server under test has no replica and gives no
position: a proxy in front of it adds the header to the answers, as such a deployment would."""
from __future__ import annotations

import importlib.util
import unittest
import uuid
from typing import Any, Dict, List, Optional

import agentmem
from agentmem import POSITION_HEADER, Client

from .helpers import Proxy, new_user, service_token

A, B, LOWER = "00000000000A0000", "00000000000B0000", "0000000000090000"

# The answers' positions, in the order of the requests: a lower one arriving later (an answer
# overtaken by another), a malformed one, then a greater one.
GIVEN: List[Optional[str]] = [A, LOWER, None, "not-a-position", B]

TURN = [{"role": "user", "content": "one"}, {"role": "assistant", "content": "Echo: one"}]


def adding(given: List[Optional[str]]) -> Any:
    def handle(req: Dict[str, Any], n: int) -> Any:
        pos = given[n - 1] if n <= len(given) else None
        return "forward" if pos is None else {"forward": True, "headers": {POSITION_HEADER: pos}}

    return handle


def sent(proxy: Proxy) -> List[Optional[str]]:
    return [r["headers"].get(POSITION_HEADER.lower()) for r in proxy.requests]


class PositionTest(unittest.TestCase):
    def proxy(self, handle: Any) -> Proxy:
        p = Proxy(handle)
        self.addCleanup(p.close)
        return p

    def test_the_greatest_position_goes_with_every_later_request(self) -> None:
        _, token = new_user()
        proxy = self.proxy(adding(GIVEN))
        c = Client(proxy.url, token=token)
        other = Client(proxy.url, token=token)
        self.assertIsNone(c.position)
        sid = str(uuid.uuid4())
        res = c.call("commit-turn", {"session_id": sid, "messages": TURN}, repeatable=True, idempotent=True)
        self.assertEqual(res.position, A)
        self.assertEqual(c.position, A)
        c.commit_turn(session_id=sid, messages=TURN)
        self.assertEqual(c.position, A, "a lower position does not replace a greater one")
        self.assertEqual(len(c.get_context(session_id=sid)["messages"]), 4)
        c.sessions.history(session_id=sid)
        self.assertEqual(c.position, A, "a malformed position is ignored")
        c.recall(query="one")
        self.assertEqual(c.position, B)
        other.get_context(session_id=sid)
        self.assertEqual(sent(proxy), [None, A, A, A, A, None])
        self.assertIsNone(other.position, "another client keeps its own")

    def test_a_position_given_at_construction_and_acting_for(self) -> None:
        _, token = new_user()
        proxy = self.proxy(lambda req, n: "forward")
        sid = str(uuid.uuid4())
        Client(proxy.url, token=token, position="00000000000c0000").get_context(session_id=sid)
        Client(proxy.url, token=token, position="0/C0000").get_context(session_id=sid)
        # A service client acting for a user shares its position.
        svc = Client(proxy.url, token=service_token(), position=A)
        uid, _ = new_user()
        svc.acting_for(uid).get_context(session_id=sid)
        self.assertEqual(sent(proxy), ["00000000000C0000", None, A])
        self.assertTrue(agentmem.is_position("00000000000C0000"))
        self.assertFalse(agentmem.is_position("0/C0000"))


@unittest.skipUnless(importlib.util.find_spec("httpx") is not None, "httpx is not installed: the asyncio client is not tested")
class AsyncPositionTest(unittest.IsolatedAsyncioTestCase):
    async def test_the_greatest_position_goes_with_every_later_request(self) -> None:
        import asyncio

        from agentmem.aio import AsyncClient

        asyncio.get_running_loop().slow_callback_duration = 5
        _, token = new_user()
        proxy = Proxy(adding(GIVEN))
        self.addCleanup(proxy.close)
        c = AsyncClient(proxy.url, token=token)
        self.addAsyncCleanup(c.aclose)
        sid = str(uuid.uuid4())
        await c.commit_turn(session_id=sid, messages=TURN)
        await c.commit_turn(session_id=sid, messages=TURN)
        self.assertEqual(len((await c.get_context(session_id=sid))["messages"]), 4)
        await c.sessions.history(session_id=sid)
        await c.recall(query="one")
        self.assertEqual(c.position, B)
        self.assertEqual(sent(proxy), [None, A, A, A, A])


if __name__ == "__main__":
    unittest.main()
