// get-context's formats, proved against the libraries and SDKs that define them: the answer of
// the real server (a conversation with text, images, a file, audio, tool calls and results,
// and several system messages) is
//
//   - langchain: read by @langchain/core's own mapStoredMessagesToChatMessages (0.3 and 1.x)
//     and written back identically by mapChatMessagesToStoredMessages;
//   - anthropic: type-checked by tsc against @anthropic-ai/sdk's MessageCreateParams, and held
//     to the Messages API's documented rules (a user message first, roles alternating, each
//     tool_use answered by a tool_result at the start of the very next user message, no empty
//     text, tool ids of ^[a-zA-Z0-9_-]+$);
//   - openai: type-checked against the openai package's ChatCompletionMessageParam, and held to
//     the Chat Completions API's rules (tool messages right after the assistant message that
//     called them, one per call).
//
// The client's own types are held to the same SDKs: get-context's answer goes, without a cast,
// into openai.chat.completions.create and anthropic.messages.create under tsc --strict, and the
// server's answers are values of those types.
//
// Each type check also compiles a wrong answer marked @ts-expect-error, so that a check that
// could not fail would fail.
import { randomUUID } from "node:crypto";
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { test } from "node:test";

import ts from "typescript";

import { AgentMemClient } from "../../dist/index.js";
import { newUser, url } from "../helpers.mjs";

const png =
  "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAAC0lEQVR4nGNgAAIAAAUAAXpeqz8AAAAASUVORK5CYII=";
const pdf = "data:application/pdf;base64," + Buffer.from("%PDF-1.4\n%%EOF\n").toString("base64");

/** The conversation, as an OpenAI-style agent commits it. */
const fixture = [
  { role: "system", content: "You are a travel assistant." },
  { role: "assistant", content: "Hi! Where are you heading?" },
  {
    role: "user",
    name: "ada",
    content: [
      { type: "text", text: "Here are my ticket and a photo of the hotel." },
      { type: "image_url", image_url: { url: "https://example.com/hotel.jpg", detail: "auto" } },
      { type: "image_url", image_url: { url: png } },
      { type: "file", file: { filename: "ticket.pdf", file_data: pdf } },
    ],
    metadata: { client: "web" },
  },
  {
    role: "assistant",
    content: "Let me check the weather at both ends.",
    tool_calls: [
      { id: "call_paris", type: "function", function: { name: "weather", arguments: '{"city":"Paris"}' } },
      { id: "call:oslo:2", type: "function", function: { name: "weather", arguments: '{"city": "Oslo", "units": ["C"]}' } },
    ],
  },
  { role: "tool", tool_call_id: "call_paris", content: '{"temp":21}' },
  { role: "tool", tool_call_id: "call:oslo:2", content: [{ type: "text", text: '{"temp":4}' }] },
  { role: "assistant", content: "21 °C in Paris, 4 °C in Oslo.", metadata: { model: "gpt-x", tokens: 12 } },
  { role: "system", content: "Answer in metric units." },
  {
    role: "user",
    content: [
      { type: "text", text: "And what does this voice note say?" },
      { type: "input_audio", input_audio: { data: "UklGRiQAAABXQVZF", format: "wav" } },
    ],
  },
  { role: "assistant", content: "", tool_calls: [{ id: "call_tr", type: "function", function: { name: "transcribe", arguments: "" } }] },
  { role: "tool", tool_call_id: "call_tr", content: "Pack an umbrella." },
  { role: "user", content: "Thanks!" },
  { role: "user", content: "One more: what time is it there?" },
  { role: "assistant", name: "travel-bot", content: "It is 14:00 in Oslo." },
];

/** contexts commits the fixture for a new user and reads it back in every format. */
async function contexts() {
  const am = new AgentMemClient({ url, token: newUser().token });
  const session_id = randomUUID();
  await am.commitTurn({ session_id, agent: "formats", messages: fixture });
  const out = {};
  for (const format of ["raw", "openai", "langchain", "anthropic"]) {
    out[format] = await am.getContext({ session_id, agent: "formats", max_messages: 100, format });
  }
  return out;
}

const ctx = await contexts();

/**
 * typeCheck compiles TypeScript source (held in memory, as if in this directory, so that it
 * resolves the packages of clients/typescript) with the strict options, and returns its
 * diagnostics.
 */
function typeCheck(source) {
  const fileName = fileURLToPath(new URL("./format-check.ts", import.meta.url));
  const options = {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    lib: ["lib.es2022.d.ts", "lib.dom.d.ts"],
    types: [],
    skipLibCheck: true,
  };
  const host = ts.createCompilerHost(options);
  const { getSourceFile, fileExists, readFile } = host;
  host.getSourceFile = (name, lang, ...rest) =>
    name === fileName ? ts.createSourceFile(name, source, lang) : getSourceFile.call(host, name, lang, ...rest);
  host.fileExists = (name) => name === fileName || fileExists.call(host, name);
  host.readFile = (name) => (name === fileName ? source : readFile.call(host, name));
  const program = ts.createProgram([fileName], options, host);
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const where = d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start).line + 1 : "?";
    return `line ${where}: ${ts.flattenDiagnosticMessageText(d.messageText, "\n")}`;
  });
}

/** literal writes a JSON value on one line, as a TypeScript expression. */
const literal = (v) => JSON.stringify(v);

test("langchain: @langchain/core reads the messages and writes them back the same", async () => {
  const raw = ctx.raw.messages;
  const stored = ctx.langchain.messages;
  assert.equal(stored.length, fixture.length);
  for (const [label, lc] of [
    ["@langchain/core 0.3", await import("@langchain/core/messages")],
    ["@langchain/core 1.x", await import("langchain-core-1/messages")],
  ]) {
    const chat = lc.mapStoredMessagesToChatMessages(stored);
    const types = { user: "human", assistant: "ai", system: "system", tool: "tool" };
    const classes = { human: lc.HumanMessage, ai: lc.AIMessage, system: lc.SystemMessage, tool: lc.ToolMessage };
    chat.forEach((m, i) => {
      const want = types[fixture[i].role];
      assert.equal(m.getType(), want, `${label}: message ${i} type`);
      assert.ok(m instanceof classes[want], `${label}: message ${i} is not a ${classes[want].name}`);
      assert.deepEqual(m.content, fixture[i].content, `${label}: message ${i} content as committed`);
      assert.equal(m.id, raw[i].id, `${label}: message ${i} id`);
      assert.equal(m.name ?? null, fixture[i].name ?? null, `${label}: message ${i} name`);
      assert.deepEqual(m.response_metadata, fixture[i].metadata ?? {}, `${label}: message ${i} metadata`);
      if (want === "tool") assert.equal(m.tool_call_id, fixture[i].tool_call_id, `${label}: message ${i} tool_call_id`);
      if (want === "ai") {
        const calls = (fixture[i].tool_calls ?? []).map((c) => ({
          name: c.function.name,
          args: c.function.arguments ? JSON.parse(c.function.arguments) : {},
          id: c.id,
          type: "tool_call",
        }));
        assert.deepEqual(m.tool_calls, calls, `${label}: message ${i} tool_calls`);
        assert.deepEqual(m.invalid_tool_calls, [], `${label}: message ${i} invalid_tool_calls`);
      }
    });
    // Written back by the library, they are what the server answered.
    const back = JSON.parse(JSON.stringify(lc.mapChatMessagesToStoredMessages(chat)));
    assert.deepEqual(back, stored, `${label}: mapChatMessagesToStoredMessages changed the messages`);
    // And read again, the same messages.
    assert.deepEqual(lc.mapStoredMessagesToChatMessages(back), chat, `${label}: a second round trip differs`);
  }
});

test("anthropic: MessageCreateParams of @anthropic-ai/sdk, and the Messages API's rules", () => {
  const { system, messages, usage } = ctx.anthropic;
  assert.equal(system, "You are a travel assistant.\n\nAnswer in metric units.");
  // The greeting before the first user message cannot lead: dropped and counted. The audio
  // part has no Messages API form: dropped and counted.
  assert.equal(usage.dropped_messages, 1);
  assert.equal(usage.dropped_parts, 1);
  assert.equal(usage.messages, fixture.length - 1);

  const params = { model: "claude-sonnet-4-5", max_tokens: 1024, ...(system === null ? {} : { system }), messages };
  const diagnostics = typeCheck(`import Anthropic from "@anthropic-ai/sdk";
const params: Anthropic.MessageCreateParamsNonStreaming = ${literal(params)};
const list: Anthropic.MessageParam[] = ${literal(messages)};
// @ts-expect-error: the Messages API has no tool role
const wrongRole: Anthropic.MessageParam[] = ${literal([...messages, { role: "tool", content: "x" }])};
// @ts-expect-error: a tool result names its call by tool_use_id
const wrongResult: Anthropic.MessageParam = ${literal({ role: "user", content: [{ type: "tool_result", tool_call_id: "call_paris", content: "x" }] })};
export { params, list, wrongRole, wrongResult };
`);
  assert.deepEqual(diagnostics, []);

  // The documented rules.
  assert.equal(messages[0].role, "user", "the first message must be a user message");
  const blocksOf = (m) => (typeof m.content === "string" ? [{ type: "text", text: m.content }] : m.content);
  let pending = [];
  messages.forEach((m, i) => {
    assert.ok(m.role === "user" || m.role === "assistant", `message ${i} role ${m.role}`);
    if (i > 0) assert.notEqual(m.role, messages[i - 1].role, `messages ${i - 1} and ${i} do not alternate`);
    const blocks = blocksOf(m);
    assert.ok(blocks.length > 0, `message ${i} is empty`);
    // The results of the previous message's tool_use blocks come first, one per call.
    const results = blocks.slice(0, pending.length);
    assert.deepEqual(
      results.map((b) => [b.type, b.tool_use_id]),
      pending.map((id) => ["tool_result", id]),
      `message ${i} must start with the results of ${pending}`,
    );
    for (const b of blocks.slice(pending.length)) {
      assert.notEqual(b.type, "tool_result", `message ${i}: a tool_result without its tool_use right before`);
      if (b.type === "text") assert.ok(b.text.trim() !== "", `message ${i}: empty text block`);
    }
    pending = [];
    for (const b of blocks) {
      if (b.type !== "tool_use") continue;
      assert.equal(m.role, "assistant", `message ${i}: tool_use in a user message`);
      assert.match(b.id, /^[a-zA-Z0-9_-]+$/, `message ${i}: tool_use id`);
      assert.equal(typeof b.input, "object");
      pending.push(b.id);
    }
  });
  assert.deepEqual(pending, [], "the last tool calls have no results");

  // What was mapped: the images (by URL and as base64 data), the PDF, the tool calls.
  const blocks = messages.flatMap(blocksOf);
  assert.deepEqual(
    blocks.filter((b) => b.type === "image").map((b) => b.source),
    [
      { type: "url", url: "https://example.com/hotel.jpg" },
      { type: "base64", media_type: "image/png", data: png.slice(png.indexOf(",") + 1) },
    ],
  );
  assert.deepEqual(
    blocks.filter((b) => b.type === "document").map((b) => [b.title, b.source.media_type]),
    [["ticket.pdf", "application/pdf"]],
  );
  assert.deepEqual(
    blocks.filter((b) => b.type === "tool_use").map((b) => [b.name, b.input]),
    [
      ["weather", { city: "Paris" }],
      ["weather", { city: "Oslo", units: ["C"] }],
      ["transcribe", {}],
    ],
  );
});

test("openai: ChatCompletionMessageParam of the openai package, and the Chat Completions API's rules", () => {
  const { messages, usage } = ctx.openai;
  assert.equal(messages.length, fixture.length);
  assert.equal(usage.dropped_messages, 0);
  const diagnostics = typeCheck(`import OpenAI from "openai";
const messages: OpenAI.Chat.ChatCompletionMessageParam[] = ${literal(messages)};
const params: OpenAI.Chat.ChatCompletionCreateParamsNonStreaming = { model: "gpt-4o", messages };
// @ts-expect-error: a tool message needs its tool_call_id
const wrongTool: OpenAI.Chat.ChatCompletionMessageParam = ${literal({ role: "tool", content: "x" })};
// @ts-expect-error: roles are user, assistant, system, developer, tool
const wrongRole: OpenAI.Chat.ChatCompletionMessageParam = ${literal({ role: "human", content: "x" })};
export { params, wrongTool, wrongRole };
`);
  assert.deepEqual(diagnostics, []);

  // Content as committed; null only for an assistant message with tool calls and no text.
  messages.forEach((m, i) => {
    const want = fixture[i].role === "assistant" && fixture[i].tool_calls && fixture[i].content === "" ? null : fixture[i].content;
    assert.deepEqual(m.content, want, `message ${i} content`);
  });
  // Each assistant message with tool calls is followed by exactly one tool message per call.
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    if (m.role === "tool") assert.fail(`message ${i}: a tool message without the assistant message that called it`);
    if (m.role !== "assistant" || !m.tool_calls) continue;
    const ids = m.tool_calls.map((c) => c.id);
    const results = messages.slice(i + 1, i + 1 + ids.length);
    assert.deepEqual(
      results.map((r) => [r.role, r.tool_call_id]),
      ids.map((id) => ["tool", id]),
      `message ${i}: its tool results must follow it`,
    );
    i += ids.length;
  }
});

test("types: get-context's openai and anthropic answers go into the SDKs' create calls without a cast", () => {
  const diagnostics = typeCheck(`import OpenAI from "openai";
import Anthropic from "@anthropic-ai/sdk";
import { AgentMemClient, type ContextAnthropic, type ContextOpenAI } from "@agentmem/client";

const agentmem = new AgentMemClient({ url: "http://127.0.0.1:9000", token: "token" });
const openai = new OpenAI({ apiKey: "key" });
const anthropic = new Anthropic({ apiKey: "key" });

export async function reply(session_id: string) {
  const ctx = await agentmem.getContext({ session_id, format: "openai" });
  await openai.chat.completions.create({ model: "gpt-4o", messages: ctx.messages });
  const actx = await agentmem.getContext({ session_id, format: "anthropic" });
  await anthropic.messages.create({
    model: "claude-sonnet-4-5",
    max_tokens: 1024,
    ...(actx.system === null ? {} : { system: actx.system }),
    messages: actx.messages,
  });
  const chat = agentmem.session({ agent: "support-bot" });
  const sctx = await chat.context({ format: "openai" });
  await openai.chat.completions.create({ model: "gpt-4o", messages: sctx.messages });
  // @ts-expect-error: the raw format is not the Chat Completions API's
  await openai.chat.completions.create({ model: "gpt-4o", messages: (await agentmem.getContext({ session_id })).messages });
}

// The server's answers are values of the client's types.
export const openaiMessages: ContextOpenAI["messages"] = ${literal(ctx.openai.messages)};
export const anthropicMessages: ContextAnthropic["messages"] = ${literal(ctx.anthropic.messages)};
`);
  assert.deepEqual(diagnostics, []);
});
