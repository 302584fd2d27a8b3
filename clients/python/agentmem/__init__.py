"""agentmem: the Python client of agentmem, a memory backend for AI agents.

Client (standard library only) and AsyncClient (httpx, `pip install 'agentmem[async]'`) call
every function of the HTTP API; ChatSession keeps a user's active session and commits turns;
StreamCommit stores a streamed model answer once it is complete; agentmem.langchain has a
LangChain chat message history (langchain-core installed).
"""
from ._call import RequestOptions
from ._transport import (
    POSITION_HEADER,
    AsyncTokenProvider,
    Response,
    Settings,
    TokenProvider,
    is_position,
    user_from_token,
)
from .client import Client
from .errors import (
    ERRORS,
    AgentMemError,
    ConflictError,
    ForbiddenError,
    InternalError,
    InvalidResponseError,
    MethodNotAllowedError,
    NetworkError,
    NotFoundError,
    PayloadTooLargeError,
    RateLimitedError,
    RequestHeaderFieldsTooLargeError,
    RequestTimeoutError,
    UnauthenticatedError,
    UnavailableError,
    UnsupportedMediaTypeError,
    ValidationError,
    parse_retry_after,
)
from .session import ChatSession, MemoryStore, SessionInfo, SessionStore, is_uuid, session_key
from .stream import StreamAccumulator, StreamCommit
from .supabase import supabase_token
from .types import FUNCTIONS, OPS

__version__ = "0.1.0"

__all__ = [
    "ERRORS",
    "FUNCTIONS",
    "OPS",
    "POSITION_HEADER",
    "AgentMemError",
    "AsyncTokenProvider",
    "ChatSession",
    "Client",
    "ConflictError",
    "ForbiddenError",
    "InternalError",
    "InvalidResponseError",
    "MemoryStore",
    "MethodNotAllowedError",
    "NetworkError",
    "NotFoundError",
    "PayloadTooLargeError",
    "RateLimitedError",
    "RequestHeaderFieldsTooLargeError",
    "RequestOptions",
    "RequestTimeoutError",
    "Response",
    "SessionInfo",
    "SessionStore",
    "Settings",
    "StreamAccumulator",
    "StreamCommit",
    "TokenProvider",
    "UnauthenticatedError",
    "UnavailableError",
    "UnsupportedMediaTypeError",
    "ValidationError",
    "is_position",
    "is_uuid",
    "parse_retry_after",
    "session_key",
    "supabase_token",
    "user_from_token",
]
