// The streaming helper stores exactly the concatenated text, once, when the stream ends.
import assert from "node:assert/strict";
import { test } from "node:test";

import { AgentMemClient, MemoryStorage, StreamAccumulator } from "../../dist/index.js";
import { newUser, url } from "../helpers.mjs";

const PIECES = ["The ", "capital ", "of Portugal ", "is Lisbon", ". ", "çã ", "😀", "\n", "done."];

function openaiChunks(pieces) {
  const base = { id: "chatcmpl-1", object: "chat.completion.chunk", created: 1, model: "gpt-4o-mini" };
  return [
    { ...base, choices: [{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }] },
    ...pieces.map((p) => ({ ...base, choices: [{ index: 0, delta: { content: p }, finish_reason: null }] })),
    { ...base, choices: [{ index: 0, delta: {}, finish_reason: "stop" }] },
    { ...base, choices: [], usage: { prompt_tokens: 9, completion_tokens: 12, total_tokens: 21 } },
  ];
}

function anthropicEvents(pieces) {
  return [
    { type: "message_start", message: { id: "msg_1", role: "assistant", content: [], model: "claude-sonnet-4-5", usage: { input_tokens: 9, output_tokens: 1 } } },
    { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
    { type: "ping" },
    ...pieces.map((p) => ({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: p } })),
    { type: "content_block_stop", index: 0 },
    { type: "content_block_start", index: 1, content_block: { type: "tool_use", id: "toolu_1", name: "lookup", input: {} } },
    { type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: '{"q": "lis' } },
    { type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: 'bon"}' } },
    { type: "content_block_stop", index: 1 },
    { type: "message_delta", delta: { stop_reason: "tool_use" }, usage: { output_tokens: 15 } },
    { type: "message_stop" },
  ];
}

async function* aiter(items) {
  for (const i of items) yield i;
}

function chatFor() {
  const user = newUser();
  const client = new AgentMemClient({ url, token: user.token });
  return { client, chat: client.session({ agent: "stream", storage: new MemoryStorage() }) };
}

test("an OpenAI stream is relayed and stored as one message of the concatenated text", async () => {
  const { chat } = chatFor();
  const reply = chat.stream(aiter(openaiChunks(PIECES)), { before: [{ role: "user", content: "Capital of Portugal?" }] });
  const relayed = [];
  for await (const t of reply.texts()) relayed.push(t);
  assert.deepEqual(relayed, PIECES);
  assert.equal(reply.result.messages.length, 2);
  const { messages } = await chat.history({ order: "oldest" });
  assert.deepEqual(messages.map((m) => m.role), ["user", "assistant"]);
  assert.equal(messages[1].content, PIECES.join(""));
  assert.equal(messages[1].metadata.model, "gpt-4o-mini");
  assert.equal(messages[1].metadata.finish_reason, "stop");
  assert.equal(messages[1].metadata.usage.completion_tokens, 12);
});

test("an Anthropic stream stores its text and its tool use", async () => {
  const { chat } = chatFor();
  const reply = chat.stream(anthropicEvents(PIECES), { before: [{ role: "user", content: "Capital?" }], metadata: { conversation: "c-1" } });
  let n = 0;
  for await (const _ of reply) n++;
  assert.equal(n, anthropicEvents(PIECES).length, "every event passes through");
  const { messages } = await chat.history({ order: "oldest" });
  assert.equal(messages[1].content, PIECES.join(""));
  assert.equal(messages[1].tool_calls[0].id, "toolu_1");
  assert.deepEqual(JSON.parse(messages[1].tool_calls[0].function.arguments), { q: "lisbon" });
  assert.equal(messages[1].metadata.finish_reason, "tool_use");
  assert.equal(messages[1].metadata.conversation, "c-1");
});

test("a broken or abandoned stream stores nothing", async () => {
  const { client, chat } = chatFor();
  const sid = await chat.sessionId();
  async function* broken() {
    yield openaiChunks(["half an "])[1];
    throw new Error("the model's stream broke");
  }
  const reply = chat.stream(broken(), { before: [{ role: "user", content: "q" }] });
  await assert.rejects(async () => {
    for await (const _ of reply);
  }, /broke/);
  assert.equal(reply.result, undefined);
  const abandoned = chat.stream(aiter(openaiChunks(PIECES)), { before: [{ role: "user", content: "q" }] });
  for await (const _ of abandoned) break;
  assert.equal(abandoned.result, undefined);
  const { total } = await client.sessions.history({ session_id: sid });
  assert.equal(total, 0);
});

test("the accumulator reads the Responses API's text events", () => {
  const acc = new StreamAccumulator();
  for (const e of [
    { type: "response.output_text.delta", delta: "Hel" },
    { type: "response.output_text.delta", delta: "lo" },
    { type: "response.completed", response: { model: "gpt-5", status: "completed" } },
  ])
    acc.add(e);
  assert.deepEqual(acc.message(), { role: "assistant", content: "Hello", metadata: { model: "gpt-5", finish_reason: "completed" } });
  assert.equal(new StreamAccumulator().message(), undefined);
});
