"""Each problem code of the API raised as its class, with the request id and what it carries.

Every code the server can be brought to answer comes from the real server; only 500 and 503,
which a healthy server answers to no request, come from a proxy answering the server's bodies.
"""
from __future__ import annotations

import unittest
import uuid
from typing import Any, Dict, Set

import agentmem
from agentmem import Client, ERRORS

from .helpers import URL, Proxy, mint, new_user, problem, service_token

RAISED: Set[str] = set()


class ErrorsTest(unittest.TestCase):
    def setUp(self) -> None:
        self.uid, token = new_user()
        self.c = Client(URL, token=token, retries=0)

    def raised(self, cls: type, fn: Any, *args: Any, **kwargs: Any) -> agentmem.AgentMemError:
        with self.assertRaises(cls) as ctx:
            fn(*args, **kwargs)
        err = ctx.exception
        assert isinstance(err, agentmem.AgentMemError)
        self.assertEqual(type(err), cls, f"raised {type(err).__name__}, not {cls.__name__}")
        self.assertIsInstance(err, agentmem.AgentMemError)
        self.assertTrue(err.request_id, "every error carries the request id")
        RAISED.add(err.code)
        return err

    def test_invalid_request_is_validation_error_with_the_field(self) -> None:
        err = self.raised(agentmem.ValidationError, self.c.commit_turn, session_id=str(uuid.uuid4()),
                          messages=[{"role": "user", "content": "ok"}, {"role": "robot", "content": "x"}])
        assert isinstance(err, agentmem.ValidationError)
        self.assertEqual(err.status, 400)
        self.assertEqual(err.field, "messages[1].role")
        self.assertIn("must be one of", err.field_error("messages[1].role") or "")

    def test_unauthenticated(self) -> None:
        expired = Client(URL, token=mint(str(uuid.uuid4()), ttl=-60), retries=0)
        err = self.raised(agentmem.UnauthenticatedError, expired.user_state.get)
        self.assertEqual(err.status, 401)
        self.raised(agentmem.UnauthenticatedError, Client(URL, retries=0).user_state.get)

    def test_forbidden(self) -> None:
        err = self.raised(agentmem.ForbiddenError, self.c.sweep_expired)
        self.assertEqual(err.status, 403)

    def test_not_found(self) -> None:
        err = self.raised(agentmem.NotFoundError, self.c.user_memory.get, key="absent")
        self.assertEqual(err.status, 404)
        self.assertEqual(err.function, "user-memory")

    def test_method_not_allowed(self) -> None:
        # The client only POSTs: a proxy passes its request on to the server as a GET.
        proxy = Proxy(lambda req, n: "as-get")
        self.addCleanup(proxy.close)
        c = Client(proxy.url, token=mint(self.uid), retries=0)
        err = self.raised(agentmem.MethodNotAllowedError, c.user_state.get)
        self.assertEqual(err.status, 405)

    def test_conflict(self) -> None:
        sid = str(uuid.uuid4())
        self.c.commit_turn(session_id=sid, messages=[{"role": "user", "content": "a"}], idempotency_key="k-1")
        err = self.raised(agentmem.ConflictError, self.c.commit_turn, session_id=sid,
                          messages=[{"role": "user", "content": "b"}], idempotency_key="k-1")
        self.assertEqual(err.status, 409)

    def test_payload_too_large(self) -> None:
        err = self.raised(agentmem.PayloadTooLargeError, self.c.notes.overwrite, content="x" * (1 << 20))
        self.assertEqual(err.status, 413)

    def test_unsupported_media_type(self) -> None:
        err = self.raised(agentmem.UnsupportedMediaTypeError, self.c.user_state.get,
                          options={"headers": {"Content-Type": "text/plain"}})
        self.assertEqual(err.status, 415)

    def test_request_header_fields_too_large(self) -> None:
        err = self.raised(agentmem.RequestHeaderFieldsTooLargeError, self.c.user_state.get,
                          options={"headers": {"X-Padding": "p" * (70 << 10)}})
        self.assertEqual(err.status, 431)

    def test_rate_limited_with_retry_after(self) -> None:
        # The test server allows 2 backfills a user an hour (RATE_LIMIT_BACKFILL_PER_HOUR=2).
        sid = str(uuid.uuid4())
        self.c.commit_turn(session_id=sid, messages=[{"role": "user", "content": "hi"}])
        for _ in range(2):
            self.c.intents(type="backfillSession", session_id=sid)
        err = self.raised(agentmem.RateLimitedError, self.c.intents, type="backfillSession", session_id=sid)
        self.assertEqual(err.status, 429)
        self.assertIsNotNone(err.retry_after)
        assert err.retry_after is not None
        self.assertGreater(err.retry_after, 0)
        self.assertTrue(err.retryable)

    def test_unavailable_and_internal_from_their_bodies(self) -> None:
        answers: Dict[int, Any] = {
            1: {"status": 503, "headers": {"Retry-After": "7", "X-Request-Id": "rid-503"},
                "body": problem(503, "unavailable", "the database is unreachable")},
            2: {"status": 500, "headers": {"X-Request-Id": "rid-500"}, "body": problem(500, "internal", "internal error")},
        }
        proxy = Proxy(lambda req, n: answers[n])
        self.addCleanup(proxy.close)
        c = Client(proxy.url, token=mint(self.uid), retries=0)
        err = self.raised(agentmem.UnavailableError, c.user_state.get)
        self.assertEqual(err.retry_after, 7)
        self.assertEqual(err.detail, "the database is unreachable")
        err = self.raised(agentmem.InternalError, c.user_state.get)
        self.assertEqual(err.status, 500)

    def test_no_answer_is_network_error(self) -> None:
        proxy = Proxy(lambda req, n: "forward")
        url = proxy.url
        proxy.close()
        with self.assertRaises(agentmem.NetworkError) as ctx:
            Client(url, token=mint(self.uid), retries=0).user_state.get()
        self.assertEqual(ctx.exception.status, 0)
        self.assertEqual(ctx.exception.code, "network_error")

    def test_service_caller_without_user_is_validation_error(self) -> None:
        err = self.raised(agentmem.ValidationError, Client(URL, token=service_token(), retries=0).user_state.get)
        self.assertEqual(err.status, 400)

    def test_zz_every_code_was_raised(self) -> None:
        if len(RAISED) < 5:
            self.skipTest("run with the whole class to check coverage")
        self.assertEqual(set(ERRORS) - RAISED, set())


if __name__ == "__main__":
    unittest.main()
