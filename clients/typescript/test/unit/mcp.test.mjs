// The mcp function through the official MCP TypeScript SDK's client over Streamable HTTP:
// initialize, the tools as listed, every tool called, errors as tool results or protocol
// errors, and two users who never see each other's data through any tool.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { test } from "node:test";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

import { newUser, serviceToken, url } from "../helpers.mjs";

const endpoint = new URL("/v1/mcp", url);

/** connect gives an MCP client for token, closed after the test. */
async function connect(t, token) {
  const client = new Client({ name: "agentmem-test", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(endpoint, {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  t.after(() => client.close());
  return client;
}

/** ok calls a tool and gives its structured content, failing on a tool error. */
async function ok(client, name, args = {}) {
  const res = await client.callTool({ name, arguments: args });
  assert.ok(!res.isError, `${name}: ${JSON.stringify(res.content)}`);
  assert.ok(res.structuredContent, `${name}: no structured content`);
  return res.structuredContent;
}

/** toolError calls a tool that must answer a tool error and gives its problem. */
async function toolError(client, name, args) {
  const res = await client.callTool({ name, arguments: args });
  assert.equal(res.isError, true, `${name} ${JSON.stringify(args)}: ${JSON.stringify(res)}`);
  return JSON.parse(res.content[0].text);
}

const toolNames = [
  "commit_turn",
  "forget_memory",
  "get_context",
  "get_user_context",
  "list_memories",
  "manage_long_term_memory",
  "recall_memory",
  "search_history",
  "search_knowledge_base",
  "store_memory",
];

test("mcp: initialize and list the tools with schemas and annotations", async (t) => {
  const client = await connect(t, newUser().token);
  assert.equal(client.getServerVersion()?.name, "agentmem");
  assert.ok(client.getServerCapabilities()?.tools, "the server offers tools");
  const { tools } = await client.listTools();
  assert.deepEqual(tools.map((x) => x.name).sort(), toolNames);
  for (const tool of tools) {
    assert.equal(tool.inputSchema.type, "object", tool.name);
    assert.equal(tool.outputSchema?.type, "object", tool.name);
    assert.ok(tool.description.length > 80, `${tool.name}: a description a model can choose by`);
    assert.equal(typeof tool.annotations?.readOnlyHint, "boolean", tool.name);
    assert.equal(typeof tool.annotations?.destructiveHint, "boolean", tool.name);
    assert.equal(typeof tool.annotations?.idempotentHint, "boolean", tool.name);
  }
  const byName = Object.fromEntries(tools.map((x) => [x.name, x]));
  assert.equal(byName.recall_memory.annotations.readOnlyHint, true);
  assert.equal(byName.forget_memory.annotations.destructiveHint, true);
  assert.deepEqual(byName.manage_long_term_memory.inputSchema.properties.operation.enum, [
    "read",
    "overwrite",
    "append",
    "prepend",
    "delete_section_by_header",
    "replace_section_by_header",
    "delete_all_notes",
  ]);
});

test("mcp: every tool, as the token's user only", async (t) => {
  const ada = await connect(t, newUser().token);
  const bob = await connect(t, newUser().token);

  const stored = await ok(ada, "store_memory", { content: "User prefers metric units.", metadata: { kind: "preference" } });
  assert.equal(stored.merged, false);
  const again = await ok(ada, "store_memory", { content: "User prefers metric units." });
  assert.deepEqual(again, { id: stored.id, merged: true, content_changed: false });
  const recalled = await ok(ada, "recall_memory", { query: "which units does the user prefer?" });
  assert.equal(recalled.results[0].id, stored.id);
  assert.equal(recalled.results[0].content, "User prefers metric units.");
  assert.deepEqual((await ok(bob, "recall_memory", { query: "metric units" })).results, []);
  assert.deepEqual((await ok(bob, "list_memories")).items, []);
  assert.equal((await ok(ada, "list_memories", { limit: 10 })).items.length, 1);

  // Notes, operation by operation.
  const notes = (operation, rest = {}) => ok(ada, "manage_long_term_memory", { operation, ...rest });
  assert.equal((await notes("read")).content, "");
  await notes("overwrite", { content: "## Preferences\n- metric\n\n## Trips\n- Lisbon in May" });
  await notes("append", { content: "## Style\n- short answers" });
  await notes("prepend", { content: "# Ada" });
  let n = await notes("replace_section_by_header", { section_header: "Preferences", content: "- metric\n- green tea" });
  assert.equal(n.section_created, false);
  assert.match(n.content, /green tea/);
  n = await notes("delete_section_by_header", { section_header: "## Trips" });
  assert.doesNotMatch(n.content, /Lisbon/);
  assert.match(n.content, /^# Ada/);
  assert.equal((await ok(bob, "manage_long_term_memory", { operation: "read" })).content, "");

  const uc = await ok(ada, "get_user_context");
  assert.match(uc.text, /green tea/);
  assert.equal((await ok(bob, "get_user_context")).text, "");

  // A turn, its window and its search.
  const session = randomUUID();
  const turn = {
    session_id: session,
    idempotency_key: randomUUID(),
    messages: [
      { role: "user", content: "I am flying to Reykjavik in March." },
      { role: "assistant", content: "Noted: Reykjavik in March." },
    ],
  };
  const first = await ok(ada, "commit_turn", turn);
  const retry = await ok(ada, "commit_turn", turn);
  assert.equal(first.replayed, false);
  assert.equal(retry.replayed, true);
  assert.deepEqual(retry.messages, first.messages);
  const ctx = await ok(ada, "get_context", { session_id: session, format: "openai", user_context: true });
  assert.deepEqual(
    ctx.messages.map((m) => m.content),
    ["I am flying to Reykjavik in March.", "Noted: Reykjavik in March."],
  );
  assert.match(ctx.user_context, /green tea/);
  assert.deepEqual((await ok(bob, "get_context", { session_id: session })).messages, []);
  const history = await ok(ada, "search_history", { query: "Reykjavik", mode: "text" });
  assert.equal(history.results[0].session_id, session);
  assert.deepEqual((await ok(bob, "search_history", { query: "Reykjavik", mode: "text" })).results, []);
  assert.equal((await toolError(bob, "commit_turn", { session_id: session, messages: [{ role: "user", content: "hi" }] })).code, "not_found");

  assert.ok(Array.isArray((await ok(ada, "search_knowledge_base", { query: "refund policy" })).results));

  assert.equal((await toolError(bob, "forget_memory", { id: stored.id })).code, "not_found");
  assert.deepEqual(await ok(ada, "forget_memory", { id: stored.id }), { deleted: true });
  assert.deepEqual((await ok(ada, "recall_memory", { query: "metric units" })).results, []);
  assert.deepEqual(await ok(ada, "manage_long_term_memory", { operation: "delete_all_notes" }), { agent: "default", deleted: true });
});

test("mcp: errors a model can act on are tool errors; auth and refusals are protocol errors", async (t) => {
  const user = newUser();
  const client = await connect(t, user.token);
  let p = await toolError(client, "recall_memory", { query: "x", k: 0 });
  assert.equal(p.code, "invalid_request");
  assert.equal(p.errors[0].field, "k");
  p = await toolError(client, "manage_long_term_memory", { operation: "append", content: "x".repeat(20_001) });
  assert.equal(p.code, "invalid_request");
  assert.match(p.detail, /20000/);
  p = await toolError(client, "manage_long_term_memory", { operation: "rewrite" });
  assert.equal(p.errors[0].field, "operation");
  p = await toolError(client, "store_memory", { content: "x", user: "someone" });
  assert.equal(p.errors[0].field, "user");
  p = await toolError(client, "manage_long_term_memory", { operation: "delete_section_by_header", section_header: "Nope" });
  assert.equal(p.code, "not_found");

  // A user token naming another user: refused, as a JSON-RPC error.
  await assert.rejects(
    client.callTool({ name: "list_memories", arguments: { user_id: randomUUID() } }),
    (err) => err.code === -32003 && /forbidden/.test(err.message),
  );
  // A service token acts for the user it names.
  const svc = await connect(t, serviceToken());
  await ok(svc, "store_memory", { user_id: user.id, content: "User is vegetarian." });
  assert.equal((await ok(client, "list_memories")).items[0].content, "User is vegetarian.");

  // No valid token: 401 before any MCP message is read, naming the resource metadata.
  const res = await fetch(endpoint, {
    method: "POST",
    headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream", Authorization: "Bearer nope" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
  });
  assert.equal(res.status, 401);
  assert.equal((await res.json()).code, "unauthenticated");
  const metadataURL = /resource_metadata="([^"]+)"/.exec(res.headers.get("www-authenticate") ?? "")?.[1];
  assert.ok(metadataURL, res.headers.get("www-authenticate"));
  const md = await (await fetch(metadataURL)).json();
  assert.equal(md.resource, endpoint.href);
  assert.deepEqual(md.bearer_methods_supported, ["header"]);

  const bad = new Client({ name: "agentmem-test", version: "1.0.0" });
  await assert.rejects(
    bad.connect(new StreamableHTTPClientTransport(endpoint, { requestInit: { headers: { Authorization: "Bearer nope" } } })),
  );
});
