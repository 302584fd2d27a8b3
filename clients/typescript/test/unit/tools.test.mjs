// The memory tools for function calling: the same tools the mcp function lists (a drift test
// against the running server), accepted by the openai and @anthropic-ai/sdk types under
// tsc --strict, run by the one executor, and as LangChain tools.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { fileURLToPath } from "node:url";
import { test } from "node:test";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import ts from "typescript";

import {
  AgentMemClient,
  TOOL_SPECS,
  anthropicTools,
  executeTool,
  openaiResponsesTools,
  openaiTools,
  runAnthropicToolUses,
  runOpenAIToolCalls,
} from "../../dist/index.js";
import { agentmemTools } from "../../dist/langchain.js";
import { newUser, serviceToken, url } from "../helpers.mjs";

const acting = ["user_id", "tenant_id"];

test("tools: the definitions are the mcp function's tools", async (t) => {
  const client = new Client({ name: "agentmem-test", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL("/v1/mcp", url), {
      requestInit: { headers: { Authorization: `Bearer ${newUser().token}` } },
    }),
  );
  t.after(() => client.close());
  const { tools } = await client.listTools();
  assert.equal(tools.length, TOOL_SPECS.length);
  for (const spec of TOOL_SPECS) {
    const served = tools.find((x) => x.name === spec.name);
    assert.ok(served, `the server lists no ${spec.name}`);
    const input = structuredClone(served.inputSchema);
    for (const a of acting) delete input.properties[a];
    assert.deepEqual(input, spec.inputSchema, `${spec.name}: input schema`);
    assert.deepEqual(served.outputSchema, spec.outputSchema, `${spec.name}: output schema`);
    assert.equal(served.description, spec.description, `${spec.name}: description`);
    assert.equal(served.title, spec.title);
    for (const k of ["readOnlyHint", "destructiveHint", "idempotentHint"]) {
      assert.equal(served.annotations[k], spec.annotations[k], `${spec.name}: ${k}`);
    }
  }
  for (const spec of TOOL_SPECS) {
    for (const a of acting) assert.ok(!(a in spec.inputSchema.properties), `${spec.name} shows a model ${a}`);
  }
});

/** typeCheck compiles source (in this folder, so it resolves the client's packages) strictly. */
function typeCheck(source) {
  const fileName = fileURLToPath(new URL("./tools-check.ts", import.meta.url));
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

test("tools: the openai and @anthropic-ai/sdk types accept the definitions and the executor's answers", () => {
  const diagnostics = typeCheck(`import OpenAI from "openai";
import Anthropic from "@anthropic-ai/sdk";
import { AgentMemClient, anthropicTools, openaiResponsesTools, openaiTools, runAnthropicToolUses, runOpenAIToolCalls } from "../../dist/index.js";

const am = new AgentMemClient({ url: "http://localhost", token: "t" });
const chat: OpenAI.Chat.ChatCompletionCreateParamsNonStreaming = { model: "gpt-4o", messages: [], tools: openaiTools() };
const responses: OpenAI.Responses.ResponseCreateParamsNonStreaming = { model: "gpt-4o", input: "hi", tools: openaiResponsesTools() };
const messages: Anthropic.MessageCreateParamsNonStreaming = { model: "claude-sonnet-4-5", max_tokens: 100, messages: [], tools: anthropicTools(["recall_memory"]) };

async function loop(completion: OpenAI.Chat.ChatCompletion, reply: Anthropic.Message) {
  const calls = (completion.choices[0]?.message.tool_calls ?? []).filter((c) => c.type === "function");
  const toolMessages: OpenAI.Chat.ChatCompletionToolMessageParam[] = await runOpenAIToolCalls(am, calls);
  const results: Anthropic.ToolResultBlockParam[] = await runAnthropicToolUses(am, reply.content);
  const next: Anthropic.MessageParam = { role: "user", content: results };
  return { toolMessages, next };
}
// @ts-expect-error: no such tool
openaiTools(["drop_database"]);
// @ts-expect-error: the Chat Completions API wants a function object, not the Responses API's flat tool
const wrong: OpenAI.Chat.ChatCompletionTool[] = openaiResponsesTools();
export { chat, responses, messages, loop, wrong };
`);
  assert.deepEqual(diagnostics, []);
  assert.equal(openaiTools().length, TOOL_SPECS.length);
  assert.deepEqual(openaiTools(["store_memory"])[0].function.parameters, TOOL_SPECS[0].inputSchema);
  assert.deepEqual(anthropicTools()[1].input_schema, TOOL_SPECS[1].inputSchema);
});

test("tools: the executor runs every tool as the client's user", async () => {
  const user = newUser();
  const am = new AgentMemClient({ url, token: user.token });
  const other = new AgentMemClient({ url, token: newUser().token });
  const run = async (name, args) => {
    const r = await executeTool(am, name, args);
    assert.ok(r.ok, `${name}: ${r.text}`);
    assert.deepEqual(JSON.parse(r.text), r.output);
    return r.output;
  };
  const session = randomUUID();
  const stored = await run("store_memory", '{"content": "User drinks green tea."}'); // OpenAI's JSON text
  assert.equal((await run("recall_memory", { query: "what does the user drink?" })).results[0].id, stored.id);
  assert.equal((await executeTool(other, "recall_memory", { query: "green tea" })).output.results.length, 0);
  assert.equal((await run("list_memories", {})).items.length, 1);
  assert.match((await run("manage_long_term_memory", { operation: "append", content: "## Drinks\n- tea" })).content, /tea/);
  assert.match((await run("get_user_context", {})).text, /tea/);
  await run("commit_turn", { session_id: session, messages: [{ role: "user", content: "Remind me about Oslo." }] });
  assert.equal((await run("get_context", { session_id: session })).messages.length, 1);
  assert.equal((await run("search_history", { query: "Oslo", mode: "text" })).results[0].session_id, session);
  assert.ok(Array.isArray((await run("search_knowledge_base", { query: "tea" })).results));
  assert.deepEqual(await run("forget_memory", { id: stored.id }), { deleted: true });

  // What a model can act on comes back as a result, not an exception.
  let r = await executeTool(am, "forget_memory", { id: stored.id });
  assert.equal(r.ok, false);
  assert.equal(r.error.code, "not_found");
  r = await executeTool(am, "recall_memory", "{not json");
  assert.equal(r.error.code, "invalid_request");
  r = await executeTool(am, "rm_rf", {});
  assert.match(r.error.detail, /no tool named rm_rf/);
  r = await executeTool(am, "recall_memory", { query: "x", k: 0 });
  assert.deepEqual([r.ok, r.error.code, r.error.errors[0].field], [false, "invalid_request", "k"]);
  // A refusal throws like the client's functions do.
  await assert.rejects(executeTool(am, "list_memories", { user_id: randomUUID() }), { name: "AgentMemError", code: "forbidden" });

  // The loops' helpers answer each call by its id.
  const toolMessages = await runOpenAIToolCalls(am, [
    { id: "call_1", type: "function", function: { name: "list_memories", arguments: "{}" } },
    { id: "call_2", type: "function", function: { name: "forget_memory", arguments: JSON.stringify({ id: stored.id }) } },
  ]);
  assert.deepEqual(toolMessages.map((m) => [m.role, m.tool_call_id]), [["tool", "call_1"], ["tool", "call_2"]]);
  assert.equal(JSON.parse(toolMessages[1].content).code, "not_found");
  const blocks = await runAnthropicToolUses(am, [
    { type: "text", text: "Let me check." },
    { type: "tool_use", id: "toolu_1", name: "get_user_context", input: {} },
  ]);
  assert.deepEqual(blocks.map((b) => [b.type, b.tool_use_id, b.is_error]), [["tool_result", "toolu_1", false]]);

  // A service caller names the user in the executor's options, never through the model.
  const svc = new AgentMemClient({ url, token: serviceToken() });
  const s = await executeTool(svc, "store_memory", { content: "User is left-handed." }, { userId: user.id });
  assert.ok(s.ok, s.text);
  assert.equal((await run("list_memories", {})).items[0].content, "User is left-handed.");
});

test("tools: LangChain tools run through the executor", async () => {
  const user = newUser();
  const tools = agentmemTools({ url, token: user.token }, { agent: "lc-agent" });
  assert.deepEqual(
    tools.map((x) => x.name),
    TOOL_SPECS.map((x) => x.name),
  );
  const byName = Object.fromEntries(tools.map((x) => [x.name, x]));
  const stored = JSON.parse(await byName.store_memory.invoke({ content: "User's dog is called Rex." }));
  assert.equal(stored.merged, false);
  const listed = JSON.parse(await byName.list_memories.invoke({ agent: "lc-agent" }));
  assert.equal(listed.items[0].id, stored.id);
  assert.equal(listed.items[0].agent, "lc-agent", "the option's agent applies when the model names none");
  const problem = JSON.parse(await byName.forget_memory.invoke({ id: randomUUID() }));
  assert.equal(problem.code, "not_found");
});
