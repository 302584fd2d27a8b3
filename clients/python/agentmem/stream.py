"""stream: store a streamed model answer as one assistant message when the stream ends.

A chat server relays a model's stream to its user as it comes, and wants the whole answer in
agentmem once it is complete, not one message per delta, nor a half answer when the stream
breaks. StreamAccumulator reads the deltas of the OpenAI Chat Completions and Responses
streams and of the Anthropic Messages stream (the SDKs' event objects or their JSON as dicts);
StreamCommit passes a stream through unchanged and commits one turn, the messages given
before it and the assistant message, when the stream ends.
"""
from __future__ import annotations

import json
import uuid
from typing import Any, Callable, Dict, Generic, Iterable, Iterator, List, Mapping, Optional, Sequence, TypeVar, cast

from .types import CommitResult, MessageIn, ToolCall

T = TypeVar("T")


def _get(obj: Any, key: str) -> Any:
    """_get reads a field of an SDK event object or of its JSON as a dict."""
    if obj is None:
        return None
    if isinstance(obj, Mapping):
        return obj.get(key)  # type: ignore[union-attr]
    return getattr(obj, key, None)


def _plain(obj: Any) -> Any:
    """_plain turns an SDK object (pydantic) into JSON-like data, for metadata."""
    if obj is None or isinstance(obj, (str, int, float, bool)):
        return obj
    if isinstance(obj, Mapping):
        return {str(k): _plain(v) for k, v in obj.items()}  # type: ignore[union-attr]
    if isinstance(obj, (list, tuple)):
        return [_plain(v) for v in obj]  # type: ignore[union-attr]
    dump = getattr(obj, "model_dump", None)
    if callable(dump):
        return _plain(dump())
    if hasattr(obj, "__dict__"):
        return _plain(cast(Dict[str, Any], vars(obj)))
    return str(obj)


class _Call:
    def __init__(self) -> None:
        self.id = ""
        self.name = ""
        self.arguments = ""
        self.input: Any = None


class StreamAccumulator:
    """StreamAccumulator collects a model's streamed answer: its text, its tool calls, the model
    and why it stopped. add() takes each chunk or event and answers the text it added."""

    def __init__(self) -> None:
        self.text = ""
        self.model: Optional[str] = None
        self.finish_reason: Optional[str] = None
        self.usage: Optional[Dict[str, Any]] = None
        self._calls: Dict[int, _Call] = {}
        self._order: List[int] = []

    def _call(self, index: int) -> _Call:
        if index not in self._calls:
            self._calls[index] = _Call()
            self._order.append(index)
        return self._calls[index]

    def add(self, chunk: Any) -> str:
        """add reads one chunk (OpenAI) or event (Anthropic, OpenAI Responses); it answers the
        text delta, "" when the chunk has none."""
        kind = _get(chunk, "type")
        if isinstance(kind, str) and kind:
            return self._event(kind, chunk)
        model = _get(chunk, "model")
        if isinstance(model, str) and model:
            self.model = model
        usage = _get(chunk, "usage")
        if usage is not None:
            self.usage = _plain(usage)
        added = ""
        choices: List[Any] = list(_get(chunk, "choices") or [])
        for choice in choices:
            if (_get(choice, "index") or 0) != 0:
                continue  # n > 1: the first choice is the answer
            delta = _get(choice, "delta")
            text = _get(delta, "content")
            if isinstance(text, str):
                added += text
            calls: List[Any] = list(_get(delta, "tool_calls") or [])
            for tc in calls:
                c = self._call(int(_get(tc, "index") or 0))
                c.id = _get(tc, "id") or c.id
                fn = _get(tc, "function")
                c.name = _get(fn, "name") or c.name
                c.arguments += _get(fn, "arguments") or ""
            reason = _get(choice, "finish_reason")
            if isinstance(reason, str):
                self.finish_reason = reason
        self.text += added
        return added

    def _event(self, kind: str, ev: Any) -> str:
        if kind == "message_start":
            msg = _get(ev, "message")
            self.model = _get(msg, "model") or self.model
            if _get(msg, "usage") is not None:
                self.usage = _plain(_get(msg, "usage"))
        elif kind == "content_block_start":
            block = _get(ev, "content_block")
            if _get(block, "type") == "tool_use":
                c = self._call(int(_get(ev, "index") or 0))
                c.id = _get(block, "id") or ""
                c.name = _get(block, "name") or ""
                c.input = _get(block, "input")
            elif _get(block, "type") == "text" and _get(block, "text"):
                self.text += _get(block, "text")
                return str(_get(block, "text"))
        elif kind == "content_block_delta":
            delta = _get(ev, "delta")
            dtype = _get(delta, "type")
            if dtype == "text_delta":
                text = _get(delta, "text") or ""
                self.text += text
                return text
            if dtype == "input_json_delta":
                self._call(int(_get(ev, "index") or 0)).arguments += _get(delta, "partial_json") or ""
        elif kind == "message_delta":
            reason = _get(_get(ev, "delta"), "stop_reason")
            if isinstance(reason, str):
                self.finish_reason = reason
            if _get(ev, "usage") is not None:
                usage = _plain(_get(ev, "usage"))
                self.usage = {**(self.usage or {}), **usage} if isinstance(usage, dict) else self.usage
        elif kind == "response.output_text.delta":
            text = _get(ev, "delta") or ""
            self.text += text
            return text
        elif kind == "response.completed":
            resp = _get(ev, "response")
            self.model = _get(resp, "model") or self.model
            self.finish_reason = _get(resp, "status") or self.finish_reason
        return ""

    @property
    def tool_calls(self) -> List[ToolCall]:
        """tool_calls are the calls the model made, as commit-turn takes them."""
        out: List[ToolCall] = []
        for i in self._order:
            c = self._calls[i]
            args = c.arguments
            if not args and c.input is not None:
                args = json.dumps(c.input, separators=(",", ":"))
            out.append({"id": c.id or f"call_{i}", "type": "function",
                        "function": {"name": c.name, "arguments": args or "{}"}})
        return out

    def message(self, metadata: Optional[Mapping[str, Any]] = None) -> Optional[MessageIn]:
        """message is the assistant message of the whole answer, or None when the model said
        nothing (no text and no tool call): such a message cannot be stored."""
        calls = self.tool_calls
        if not self.text and not calls:
            return None
        m: MessageIn = {"role": "assistant", "content": self.text}
        if calls:
            m["tool_calls"] = calls
        meta: Dict[str, Any] = {}
        if self.model:
            meta["model"] = self.model
        if self.finish_reason:
            meta["finish_reason"] = self.finish_reason
        if self.usage:
            meta["usage"] = self.usage
        meta.update(metadata or {})
        if meta:
            m["metadata"] = meta
        return m


CommitFn = Callable[[List[MessageIn], str], CommitResult]
"""CommitFn commits messages as one turn with the given Idempotency-Key."""


class StreamCommit(Generic[T]):
    """StreamCommit passes a model's stream through and commits it when it ends.

    Iterating it yields the stream's chunks unchanged (texts() yields the text deltas instead);
    when the stream is exhausted, the messages given as `before` (the user's message, say) and
    the assistant's whole answer are committed as one turn, with one Idempotency-Key that every
    retry reuses. A stream that raises, or is left before its end, commits nothing. `result` is
    then commit-turn's answer (None when nothing was committed).

        reply = chat.stream(openai_stream, before=[{"role": "user", "content": question}])
        for text in reply.texts():
            send_to_browser(text)
        reply.result["messages"]  # the stored messages' ids and seqs
    """

    def __init__(
        self,
        commit: CommitFn,
        stream: Iterable[T],
        *,
        before: Sequence[MessageIn] = (),
        metadata: Optional[Mapping[str, Any]] = None,
        idempotency_key: Optional[str] = None,
    ) -> None:
        self.accumulator = StreamAccumulator()
        self.result: Optional[CommitResult] = None
        self.idempotency_key = idempotency_key or str(uuid.uuid4())
        self._commit = commit
        self._stream = stream
        self._before = list(before)
        self._metadata = dict(metadata or {})
        self._started = False
        self._last = ""

    @property
    def text(self) -> str:
        """text is the answer so far."""
        return self.accumulator.text

    def __iter__(self) -> Iterator[T]:
        if self._started:
            raise RuntimeError("agentmem: a StreamCommit can be iterated once")
        self._started = True
        for chunk in self._stream:
            self._last = self.accumulator.add(chunk)
            yield chunk
        self.result = self.commit()

    def texts(self) -> Iterator[str]:
        """texts iterates the stream and yields the text deltas (empty ones left out)."""
        for _ in self:
            if self._last:
                yield self._last

    def messages(self) -> List[MessageIn]:
        """messages are what commit() stores: `before` and the assistant message."""
        out = list(self._before)
        m = self.accumulator.message(self._metadata)
        if m is not None:
            out.append(m)
        return out

    def commit(self) -> Optional[CommitResult]:
        """commit stores the turn now (iteration calls it at the stream's end); once only."""
        if self.result is not None:
            return self.result
        msgs = self.messages()
        if not msgs:
            return None
        self.result = self._commit(msgs, self.idempotency_key)
        return self.result
