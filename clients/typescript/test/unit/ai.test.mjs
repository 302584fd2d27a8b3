// @agentmem/client/ai with the AI SDK itself: generateText with the SDK's mock language model
// (ai/test) that calls agentmem's memory tools and answers, the window loaded before the call,
// the turn committed once by onFinish however often it is delivered, and the conversions
// between the SDK's model and UI messages and agentmem's.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { test } from "node:test";

import { convertToModelMessages, generateText, stepCountIs } from "ai";
import { MockLanguageModelV4 } from "ai/test";

import { AgentMemClient } from "../../dist/index.js";
import {
  commitOnFinish,
  fromModelMessages,
  fromUIMessages,
  loadMessages,
  memoryTools,
  toModelMessages,
  toUIMessages,
} from "../../dist/ai.js";
import { newUser, url } from "../helpers.mjs";

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
};
const step = (content, finish) => ({ content, finishReason: { unified: finish, raw: finish }, usage, warnings: [] });
const call = (id, toolName, input) => ({ type: "tool-call", toolCallId: id, toolName, input: JSON.stringify(input) });

test("ai: generateText calls the memory tools, and onFinish commits the turn once", async () => {
  const user = newUser();
  const am = new AgentMemClient({ url, token: user.token });
  const sessionId = randomUUID();
  await am.commitTurn({
    session_id: sessionId,
    messages: [
      { role: "user", content: "Hi, I am Ada." },
      { role: "assistant", content: "Hello Ada!" },
    ],
  });

  const model = new MockLanguageModelV4({
    doGenerate: [
      step([call("call_1", "store_memory", { content: "User prefers metric units." })], "tool-calls"),
      step([call("call_2", "recall_memory", { query: "units" })], "tool-calls"),
      step([{ type: "text", text: "Noted: metric it is." }], "stop"),
    ],
  });
  const history = await loadMessages(am, { sessionId });
  const input = [{ role: "user", content: "Please use metric units from now on." }];
  const events = [];
  const onFinish = commitOnFinish(am, { sessionId, input });
  const result = await generateText({
    model,
    tools: memoryTools(am),
    stopWhen: stepCountIs(5),
    messages: [...history, ...input],
    onFinish: async (event) => {
      events.push(event);
      await onFinish(event);
    },
  });
  assert.equal(result.text, "Noted: metric it is.");

  // The window was in the first prompt; each tool ran against agentmem and its answer reached the model.
  const firstPrompt = JSON.stringify(model.doGenerateCalls[0].prompt);
  assert.match(firstPrompt, /Hi, I am Ada\./);
  assert.deepEqual(
    model.doGenerateCalls[0].tools.map((t) => t.name).sort(),
    ["commit_turn", "forget_memory", "get_context", "get_user_context", "list_memories", "manage_long_term_memory", "recall_memory", "search_history", "search_knowledge_base", "store_memory"],
  );
  const recalled = result.steps[1].toolResults[0].output;
  assert.equal(recalled.results[0].content, "User prefers metric units.");
  assert.equal((await am.memories.list()).items[0].content, "User prefers metric units.");

  // onFinish delivered again (a retry): still one turn.
  assert.equal(events.length, 1);
  await onFinish(events[0]);
  await onFinish(events[0]);
  const ctx = await am.getContext({ session_id: sessionId, max_messages: 100 });
  assert.deepEqual(
    ctx.messages.map((m) => [m.role, m.tool_call_id ?? m.tool_calls?.[0]?.function.name ?? m.content]),
    [
      ["user", "Hi, I am Ada."],
      ["assistant", "Hello Ada!"],
      ["user", "Please use metric units from now on."],
      ["assistant", "store_memory"],
      ["tool", "call_1"],
      ["assistant", "recall_memory"],
      ["tool", "call_2"],
      ["assistant", "Noted: metric it is."],
    ],
  );

  // The stored window reads back as model messages the SDK takes for the next call.
  const again = await loadMessages(am, { sessionId });
  assert.equal(again.length, 8);
  assert.deepEqual(again[3].content[0], { type: "tool-call", toolCallId: "call_1", toolName: "store_memory", input: { content: "User prefers metric units." } });
  assert.equal(again[4].content[0].output.type, "json");
  const next = new MockLanguageModelV4({ doGenerate: step([{ type: "text", text: "ok" }], "stop") });
  await generateText({ model: next, messages: [...again, { role: "user", content: "thanks" }] });
  assert.equal(next.doGenerateCalls[0].prompt.length, 9);

  // A tool error is an output the model can act on.
  const tools = memoryTools(am, { tools: ["forget_memory"] });
  const out = await tools.forget_memory.execute({ id: randomUUID() }, { toolCallId: "x", messages: [] });
  assert.equal(out.error.code, "not_found");
});

test("ai: UI and model messages to agentmem's and back, parts included", async () => {
  const png = "data:image/png;base64,iVBORw0KGgo=";
  const ui = [
    {
      id: "u1",
      role: "user",
      parts: [
        { type: "text", text: "What is in this picture?" },
        { type: "file", mediaType: "image/png", url: png },
      ],
    },
    {
      id: "a1",
      role: "assistant",
      parts: [
        { type: "step-start" },
        { type: "dynamic-tool", toolName: "recall_memory", toolCallId: "c1", state: "output-available", input: { query: "pets" }, output: { results: [] } },
        { type: "step-start" },
        { type: "text", text: "A cat." },
      ],
    },
  ];
  const msgs = await fromUIMessages(ui);
  assert.deepEqual(msgs, [
    { role: "user", content: [{ type: "text", text: "What is in this picture?" }, { type: "image_url", image_url: { url: png } }] },
    { role: "assistant", content: "", tool_calls: [{ id: "c1", type: "function", function: { name: "recall_memory", arguments: '{"query":"pets"}' } }] },
    { role: "tool", tool_call_id: "c1", content: '{"results":[]}' },
    { role: "assistant", content: "A cat." },
  ]);

  // Committed and read back, the same conversation in the SDK's shapes.
  const am = new AgentMemClient({ url, token: newUser().token });
  const sessionId = randomUUID();
  await am.commitTurn({ session_id: sessionId, messages: msgs });
  const raw = (await am.getContext({ session_id: sessionId })).messages;
  const back = toUIMessages(raw);
  assert.deepEqual(back.map((m) => m.role), ["user", "assistant"]);
  assert.deepEqual(back[0].parts, [{ type: "text", text: "What is in this picture?" }, { type: "file", url: png, mediaType: "image/png" }]);
  assert.deepEqual(
    back[1].parts.map((p) => p.type),
    ["step-start", "dynamic-tool", "step-start", "text"],
  );
  assert.deepEqual(back[1].parts[1].output, { results: [] });
  const model = toModelMessages(raw);
  assert.deepEqual(fromModelMessages(model), msgs, "agentmem -> model -> agentmem keeps every message");
  // The UI messages convert to model messages with the SDK's own function.
  const viaSDK = await convertToModelMessages(back);
  assert.deepEqual(fromModelMessages(viaSDK), msgs);
});
