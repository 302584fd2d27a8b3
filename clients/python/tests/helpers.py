"""Helpers of the client's tests: the server under test (AGENTMEM_URL, started by
scripts/test-python.sh against a database of its own), local access tokens for it, and a
local proxy in front of it that can drop an answer or answer itself."""
from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import socket
import threading
import time
import urllib.request
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Dict, List, Optional, Tuple, Union

URL = os.environ.get("AGENTMEM_URL", "")
SECRET = os.environ.get("SUPABASE_JWT_SECRET") or "super-secret-jwt-token-with-at-least-32-characters-long"

if not URL:
    raise RuntimeError(
        "AGENTMEM_URL is not set: run the tests with scripts/test-python.sh (or make test-python), "
        "which starts agentmem serve on a test database"
    )


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def mint(sub: Optional[str] = None, role: str = "authenticated", ttl: int = 3600, tenant: Optional[str] = None) -> str:
    """mint signs an HS256 access token as the local server expects it."""
    now = int(time.time())
    claims: Dict[str, Any] = {"role": role, "iat": now, "exp": now + ttl}
    if sub:
        claims["sub"] = sub
    if role == "authenticated":
        claims["aud"] = "authenticated"
    if tenant:
        claims["app_metadata"] = {"tenant_id": tenant}
    head = _b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode()) + "." + _b64(json.dumps(claims).encode())
    sig = hmac.new(SECRET.encode(), head.encode(), hashlib.sha256).digest()
    return head + "." + _b64(sig)


def new_user() -> Tuple[str, str]:
    """new_user is a fresh user id and its token."""
    uid = str(uuid.uuid4())
    return uid, mint(uid)


def service_token() -> str:
    """service_token is a service_role token."""
    return mint(role="service_role")


Action = Union[str, Dict[str, Any]]


class Proxy:
    """Proxy is a local HTTP server in front of the server under test.

    handle(request, n) is called for each request (n counts from 1) and answers "forward" to
    pass it on, "drop-answer" to pass it on and then cut the connection without answering,
    "as-get" to pass it on as a GET, {"forward": True, "headers"} to pass it on and add headers
    to the answer, or {"status", "headers", "body"} to answer itself.
    requests records (headers, body, time) of each request.
    """

    def __init__(self, handle: Callable[[Dict[str, Any], int], Action]):
        self.requests: List[Dict[str, Any]] = []
        self._lock = threading.Lock()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass

            def do_POST(self) -> None:  # noqa: N802
                n = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(n)
                rec = {"headers": {k.lower(): v for k, v in self.headers.items()}, "body": body,
                       "path": self.path, "at": time.monotonic()}
                with proxy._lock:
                    proxy.requests.append(rec)
                    count = len(proxy.requests)
                action = handle(rec, count)
                added: Dict[str, str] = {}
                if isinstance(action, dict) and action.get("forward"):
                    added, action = action.get("headers", {}), "forward"
                if isinstance(action, dict):
                    self._answer(action["status"], action.get("headers", {}),
                                 json.dumps(action.get("body", {})).encode())
                    return
                headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection", "content-length")}
                method = "GET" if action == "as-get" else "POST"
                req = urllib.request.Request(URL + self.path, data=body if method == "POST" else None,
                                             headers=headers, method=method)
                try:
                    with urllib.request.urlopen(req, timeout=30) as res:
                        status, out_headers, out = res.status, dict(res.headers.items()), res.read()
                except urllib.error.HTTPError as e:
                    status, out_headers, out = e.code, dict(e.headers.items()), e.read()
                if action == "drop-answer":
                    # The server did the work; the client never hears of it.
                    self.connection.shutdown(socket.SHUT_RDWR)
                    self.close_connection = True
                    return
                self._answer(status, {**out_headers, **added}, out)

            def _answer(self, status: int, headers: Dict[str, str], body: bytes) -> None:
                self.send_response(status)
                for k, v in headers.items():
                    if k.lower() not in ("content-length", "transfer-encoding", "connection", "date", "server"):
                        self.send_header(k, v)
                if not any(k.lower() == "content-type" for k in headers):
                    self.send_header("Content-Type", "application/problem+json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


def problem(status: int, code: str, detail: str) -> Dict[str, Any]:
    """problem is a problem+json body as the server writes it."""
    return {"type": "about:blank", "title": code, "status": status, "code": code, "detail": detail,
            "request_id": str(uuid.uuid4())}
