"""The streaming helper stores exactly the concatenated text, once, when the stream ends."""
from __future__ import annotations

import json
import unittest
from types import SimpleNamespace
from typing import Any, Dict, Iterator, List

from agentmem import Client, StreamAccumulator

from .helpers import URL, new_user

PIECES = ["The ", "capital ", "of Portugal ", "is Lisbon", ". ", "çã ", "😀", "\n", "done."]


def openai_chunks(pieces: List[str]) -> List[Dict[str, Any]]:
    """openai_chunks are the chat.completion.chunk objects of a streamed answer, as on the wire."""
    base = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4o-mini"}
    out: List[Dict[str, Any]] = [{**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""},
                                                       "finish_reason": None}]}]
    out += [{**base, "choices": [{"index": 0, "delta": {"content": p}, "finish_reason": None}]} for p in pieces]
    out.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    out.append({**base, "choices": [], "usage": {"prompt_tokens": 9, "completion_tokens": 12, "total_tokens": 21}})
    return out


def anthropic_events(pieces: List[str]) -> List[Dict[str, Any]]:
    """anthropic_events are the Messages API's stream events, as on the wire."""
    out: List[Dict[str, Any]] = [
        {"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant", "content": [],
                                              "model": "claude-sonnet-4-5", "usage": {"input_tokens": 9, "output_tokens": 1}}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "ping"},
    ]
    out += [{"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": p}} for p in pieces]
    out += [
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_start", "index": 1,
         "content_block": {"type": "tool_use", "id": "toolu_1", "name": "lookup", "input": {}}},
        {"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": '{"q": "lis'}},
        {"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": 'bon"}'}},
        {"type": "content_block_stop", "index": 1},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 15}},
        {"type": "message_stop"},
    ]
    return out


def as_objects(value: Any) -> Any:
    """as_objects turns wire dicts into attribute objects, as the SDKs' event classes read."""
    if isinstance(value, dict):
        return SimpleNamespace(**{k: as_objects(v) for k, v in value.items()})
    if isinstance(value, list):
        return [as_objects(v) for v in value]
    return value


class StreamTest(unittest.TestCase):
    def setUp(self) -> None:
        _, token = new_user()
        self.client = Client(URL, token=token)
        self.chat = self.client.session("stream")

    def stored(self) -> List[Dict[str, Any]]:
        return list(self.chat.history(order="oldest")["messages"])

    def test_openai_stream_stores_the_concatenated_text_once(self) -> None:
        for shape in ("dicts", "objects"):
            with self.subTest(shape=shape):
                self.chat.new_session()
                chunks = openai_chunks(PIECES)
                stream = chunks if shape == "dicts" else as_objects(chunks)
                reply = self.chat.stream(iter(stream), before=[{"role": "user", "content": "Capital of Portugal?"}])
                relayed = list(reply.texts())
                self.assertEqual(relayed, PIECES, "the deltas are relayed as they come")
                assert reply.result is not None
                self.assertEqual(len(reply.result["messages"]), 2)
                msgs = self.stored()
                self.assertEqual([m["role"] for m in msgs], ["user", "assistant"])
                self.assertEqual(msgs[1]["content"], "".join(PIECES))
                self.assertEqual(msgs[1]["metadata"]["model"], "gpt-4o-mini")
                self.assertEqual(msgs[1]["metadata"]["finish_reason"], "stop")
                self.assertEqual(msgs[1]["metadata"]["usage"]["completion_tokens"], 12)

    def test_openai_tool_call_deltas(self) -> None:
        base = {"object": "chat.completion.chunk", "model": "m"}
        chunks = [
            {**base, "choices": [{"index": 0, "delta": {"tool_calls": [
                {"index": 0, "id": "call_9", "type": "function", "function": {"name": "lookup", "arguments": ""}}]}}]},
            {**base, "choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": '{"q":'}}]}}]},
            {**base, "choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": '"x"}'}}]},
                                  "finish_reason": "tool_calls"}]},
        ]
        reply = self.chat.stream(chunks, before=[{"role": "user", "content": "look it up"}])
        self.assertEqual(len(list(reply)), 3, "the chunks pass through unchanged")
        msg = self.stored()[1]
        self.assertEqual(msg["content"], "")
        self.assertEqual(msg["tool_calls"], [{"id": "call_9", "type": "function",
                                              "function": {"name": "lookup", "arguments": '{"q":"x"}'}}])

    def test_anthropic_stream_stores_text_and_tool_use(self) -> None:
        reply = self.chat.stream(anthropic_events(PIECES), before=[{"role": "user", "content": "Capital?"}],
                                 metadata={"conversation": "c-1"})
        self.assertEqual("".join(reply.texts()), "".join(PIECES))
        msg = self.stored()[1]
        self.assertEqual(msg["content"], "".join(PIECES))
        self.assertEqual(msg["tool_calls"][0]["id"], "toolu_1")
        self.assertEqual(json.loads(msg["tool_calls"][0]["function"]["arguments"]), {"q": "lisbon"})
        self.assertEqual(msg["metadata"]["model"], "claude-sonnet-4-5")
        self.assertEqual(msg["metadata"]["finish_reason"], "tool_use")
        self.assertEqual(msg["metadata"]["conversation"], "c-1")

    def test_a_broken_or_abandoned_stream_stores_nothing(self) -> None:
        def broken() -> Iterator[Dict[str, Any]]:
            yield openai_chunks(["half an "])[1]
            raise ConnectionError("the model's stream broke")

        sid = self.chat.session_id()
        reply = self.chat.stream(broken(), before=[{"role": "user", "content": "q"}])
        with self.assertRaises(ConnectionError):
            for _ in reply:
                pass
        self.assertIsNone(reply.result)
        abandoned = self.chat.stream(iter(openai_chunks(PIECES)), before=[{"role": "user", "content": "q"}])
        for _ in abandoned:
            break
        self.assertIsNone(abandoned.result)
        self.assertEqual(self.client.sessions.history(session_id=sid, agent="stream")["total"], 0)

    def test_accumulator_without_a_session(self) -> None:
        acc = StreamAccumulator()
        for chunk in openai_chunks(["a", "b"]):
            acc.add(chunk)
        self.assertEqual(acc.message(), {"role": "assistant", "content": "ab", "metadata": {
            "model": "gpt-4o-mini", "finish_reason": "stop",
            "usage": {"prompt_tokens": 9, "completion_tokens": 12, "total_tokens": 21}}})
        self.assertIsNone(StreamAccumulator().message(), "an empty answer is no message")
        responses = StreamAccumulator()
        for ev in [{"type": "response.output_text.delta", "delta": "Hel"}, {"type": "response.output_text.delta", "delta": "lo"},
                   {"type": "response.completed", "response": {"model": "gpt-5", "status": "completed"}}]:
            responses.add(ev)
        self.assertEqual(responses.text, "Hello")
        self.assertEqual(responses.model, "gpt-5")


if __name__ == "__main__":
    unittest.main()
