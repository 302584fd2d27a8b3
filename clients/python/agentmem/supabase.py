"""supabase: a token provider over a supabase-py client's session."""
from __future__ import annotations

from typing import Any, Optional, Protocol

from ._transport import TokenProvider


class SupabaseAuth(Protocol):
    """SupabaseAuth is the part of supabase-py's `client.auth` that supabase_token uses."""

    def get_session(self) -> Any: ...

    def refresh_session(self) -> Any: ...


class SupabaseLike(Protocol):
    """SupabaseLike is the part of a supabase-py client (`create_client(...)`) used here."""

    @property
    def auth(self) -> SupabaseAuth: ...


def _access_token(value: Any) -> Optional[str]:
    # get_session() answers a Session (or None); refresh_session() an AuthResponse with .session.
    session = getattr(value, "session", value)
    token = getattr(session, "access_token", None)
    return token if isinstance(token, str) and token else None


def supabase_token(supabase: SupabaseLike) -> TokenProvider:
    """supabase_token is a TokenProvider over a supabase-py client: `auth.get_session()` before
    each request (supabase-py refreshes an expired session there) and `auth.refresh_session()`
    once after a 401. Signed out, it gives no token and the server answers 401.

        client = agentmem.Client(url, token=supabase_token(supabase))
    """

    def provide(refresh: bool) -> Optional[str]:
        if refresh:
            try:
                return _access_token(supabase.auth.refresh_session())
            except Exception:  # noqa: BLE001 - a failed refresh ends the call with its 401
                return None
        return _access_token(supabase.auth.get_session())

    return provide
