// @agentmem/client/langchain against the real server and @langchain/core's own classes: the
// history must behave as LangChain's reference InMemoryChatMessageHistory does, and work in
// RunnableWithMessageHistory; the retriever is a BaseRetriever over recall.
import { createHash, randomUUID } from "node:crypto";
import assert from "node:assert/strict";
import { test } from "node:test";

import { InMemoryChatMessageHistory } from "@langchain/core/chat_history";
import { AIMessage, HumanMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";
import { ChatPromptTemplate, MessagesPlaceholder } from "@langchain/core/prompts";
import { RunnableLambda, RunnableWithMessageHistory } from "@langchain/core/runnables";

import { AgentMemClient } from "../../dist/index.js";
import { AgentMemChatMessageHistory, AgentMemRetriever, SESSION_NAMESPACE, sessionIdFor } from "../../dist/langchain.js";
import { mint, newUser, serviceToken, url } from "../helpers.mjs";

// shape keeps what a chat history must keep of a message.
const shape = (m) => ({
  type: m.getType(),
  content: m.content,
  name: m.name,
  tool_calls: (m.tool_calls ?? []).map(({ name, args, id }) => ({ name, args, id })),
  tool_call_id: m.tool_call_id,
});

async function exercise(history) {
  const seen = [];
  await history.addUserMessage("Hi, I'm Ada.");
  await history.addAIMessage("Hello Ada!");
  seen.push((await history.getMessages()).map(shape));
  await history.addMessages([
    new SystemMessage("Be brief."),
    new HumanMessage({ content: "What's the weather in Paris?", name: "ada" }),
    new AIMessage({ content: "", tool_calls: [{ id: "call_1", name: "weather", args: { city: "Paris", units: ["C"] } }] }),
    new ToolMessage({ content: '{"temp": 21}', tool_call_id: "call_1" }),
    new AIMessage("21 °C in Paris."),
  ]);
  await history.addMessage(new HumanMessage({ content: [{ type: "text", text: "Thanks!" }] }));
  seen.push((await history.getMessages()).map(shape));
  await history.clear();
  seen.push((await history.getMessages()).map(shape));
  return seen;
}

test("the history keeps what InMemoryChatMessageHistory keeps", async () => {
  const user = newUser();
  const reference = await exercise(new InMemoryChatMessageHistory());
  const mine = await exercise(new AgentMemChatMessageHistory({ client: { url, token: user.token }, sessionId: randomUUID() }));
  // Text-only content parts are stored as the message's text.
  reference[1][7].content = "Thanks!";
  assert.deepEqual(mine, reference);
  assert.equal(mine[1].length, 8);
  assert.deepEqual(mine[2], []);
});

test("the history without a session id uses the active session of (user, agent)", async () => {
  const user = newUser();
  const client = new AgentMemClient({ url, token: user.token });
  const h1 = new AgentMemChatMessageHistory({ client, agent: "lc" });
  await h1.addUserMessage("remember me");
  const h2 = new AgentMemChatMessageHistory({ client, agent: "lc" });
  assert.equal(await h2.sessionId(), await h1.sessionId());
  assert.deepEqual((await h2.getMessages()).map((m) => m.content), ["remember me"]);
  const active = await client.activeSession({ agent: "lc" });
  assert.equal(active.session_id, await h1.sessionId());
});

test("any session id string: LangChain's \"foobarbaz\" is a session of its own for each user", async () => {
  const ada = newUser();
  const bob = newUser();
  const history = (user, sessionId) => new AgentMemChatMessageHistory({ client: { url, token: user.token }, sessionId });
  await history(ada, "foobarbaz").addUserMessage("Ada here.");
  await history(bob, "foobarbaz").addUserMessage("Bob here.");
  await history(ada, "foobarbaz").addAIMessage("Hello Ada.");
  await history(ada, "another chat").addUserMessage("Elsewhere.");
  const read = async (user, id) => (await history(user, id).getMessages()).map((m) => m.content);
  assert.deepEqual(await read(ada, "foobarbaz"), ["Ada here.", "Hello Ada."], "a new history object finds the same session");
  assert.deepEqual(await read(bob, "foobarbaz"), ["Bob here."], "another user's foobarbaz is another session");
  assert.deepEqual(await read(ada, "another chat"), ["Elsewhere."]);

  // The documented mapping: UUID v5 of "<user id>\n<session id>" in SESSION_NAMESPACE (checked
  // against the RFC 9562 construction with node:crypto), and a UUID is used as it is.
  const sid = await history(ada, "foobarbaz").sessionId();
  const ns = Buffer.from(SESSION_NAMESPACE.replaceAll("-", ""), "hex");
  const h = createHash("sha1").update(ns).update(`${ada.id}\nfoobarbaz`).digest().subarray(0, 16);
  h[6] = (h[6] & 0x0f) | 0x50;
  h[8] = (h[8] & 0x3f) | 0x80;
  const hex = h.toString("hex");
  assert.equal(sid, `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`);
  assert.equal(sessionIdFor(ada.id, "foobarbaz"), sid);
  const uuid = randomUUID();
  assert.equal(await history(ada, uuid).sessionId(), uuid);
  const stored = await new AgentMemClient({ url, token: ada.token }).getContext({ session_id: sid });
  assert.deepEqual(stored.messages.map((m) => m.content), ["Ada here.", "Hello Ada."]);

  // A service caller names the user; the same user's session.
  const service = new AgentMemChatMessageHistory({ client: { url, token: serviceToken() }, userId: ada.id, sessionId: "foobarbaz" });
  assert.equal(await service.sessionId(), sid);
  assert.deepEqual((await service.getMessages()).map((m) => m.content), ["Ada here.", "Hello Ada."]);
});

test("a message with a UUID id is stored once", async () => {
  const user = newUser();
  const history = new AgentMemChatMessageHistory({ client: { url, token: user.token }, sessionId: randomUUID() });
  const id = randomUUID();
  await history.addMessage(new HumanMessage({ content: "once", id }));
  await history.addMessage(new HumanMessage({ content: "once", id }));
  const msgs = await history.getMessages();
  assert.deepEqual(msgs.map((m) => [m.id, m.content]), [[id, "once"]]);
});

test("RunnableWithMessageHistory keeps a conversation in agentmem", async () => {
  const user = newUser();
  const client = new AgentMemClient({ url, token: user.token });
  const prompt = ChatPromptTemplate.fromMessages([
    ["system", "You are a test."],
    new MessagesPlaceholder("history"),
    ["human", "{input}"],
  ]);
  // A model that answers with what it was given: the prompt's messages.
  const model = RunnableLambda.from((value) => {
    const msgs = value.toChatMessages();
    return new AIMessage(`saw ${msgs.length}: ${msgs.map((m) => m.content).join(" | ")}`);
  });
  const chain = new RunnableWithMessageHistory({
    runnable: prompt.pipe(model),
    getMessageHistory: (sessionId) => new AgentMemChatMessageHistory({ client, sessionId }),
    inputMessagesKey: "input",
    historyMessagesKey: "history",
  });
  const config = { configurable: { sessionId: randomUUID() } };
  const first = await chain.invoke({ input: "My name is Ada." }, config);
  assert.equal(first.content, "saw 2: You are a test. | My name is Ada.");
  const second = await chain.invoke({ input: "What is my name?" }, config);
  assert.equal(second.content, `saw 4: You are a test. | My name is Ada. | ${first.content} | What is my name?`);
  const stored = await client.getContext({ session_id: config.configurable.sessionId });
  assert.deepEqual(
    stored.messages.map((m) => m.role),
    ["user", "assistant", "user", "assistant"],
  );
});

test("the retriever finds memories by recall", async () => {
  const user = newUser();
  const client = new AgentMemClient({ url, token: user.token });
  await client.commitTurn({
    session_id: randomUUID(),
    agent: "lc",
    messages: [{ role: "user", content: "I live in Lyon and I love cycling." }],
    memories: [
      { content: "The user lives in Lyon.", metadata: { kind: "home" } },
      { content: "The user loves cycling.", metadata: { kind: "hobby" } },
    ],
  });
  const retriever = new AgentMemRetriever({ client, k: 1, agent: "lc" });
  const docs = await retriever.invoke("Where does the user live? Lyon");
  assert.equal(docs.length, 1);
  assert.equal(docs[0].pageContent, "The user lives in Lyon.");
  assert.equal(docs[0].metadata.kind, "home");
  assert.equal(typeof docs[0].metadata.score, "number");
  assert.equal(docs[0].metadata.id, docs[0].id);

  const filtered = await new AgentMemRetriever({ client, k: 5, filter: { kind: "hobby" } }).invoke("user");
  assert.deepEqual(filtered.map((d) => d.pageContent), ["The user loves cycling."]);

  const stranger = await new AgentMemRetriever({ client: { url, token: newUser().token } }).invoke("Lyon cycling");
  assert.deepEqual(stranger, [], "another user's memories are never found");

  // Past conversations: a message is a Document that says where it was said.
  const said = await new AgentMemRetriever({ client, k: 5, source: "messages" }).invoke("Lyon cycling");
  assert.deepEqual(said.map((d) => [d.pageContent, d.metadata.source, d.metadata.seq, d.metadata.role]),
    [["I live in Lyon and I love cycling.", "message", 1, "user"]]);
  const both = await new AgentMemRetriever({ client, k: 5, source: "all", mode: "text" }).invoke("Lyon");
  assert.deepEqual(both.map((d) => d.metadata.source).sort(), ["memory", "message"]);
});

test("the retriever gives the tenant's shared memories beside the user's own, marked shared", async () => {
  const tenant = `lc-${randomUUID()}`;
  const sub = randomUUID();
  const client = new AgentMemClient({ url, token: mint({ sub, tenant }) });
  await client.memories.create({ content: "The user rides to work in Lyon." });
  const service = new AgentMemClient({ url, token: serviceToken() });
  const shared = await service.memories.create({ shared: true, tenant_id: tenant, content: "Lyon's office has bicycle parking." });

  const docs = await new AgentMemRetriever({ client, k: 5 }).invoke("Lyon bicycle");
  assert.deepEqual(docs.map((d) => [d.pageContent, d.metadata.shared]).sort(),
    [["Lyon's office has bicycle parking.", true], ["The user rides to work in Lyon.", undefined]]);
  assert.equal(docs.find((d) => d.metadata.shared).id, shared.id);
  const own = await new AgentMemRetriever({ client, k: 5, includeShared: false }).invoke("Lyon bicycle");
  assert.deepEqual(own.map((d) => d.pageContent), ["The user rides to work in Lyon."]);
  const elsewhere = await new AgentMemRetriever({ client: { url, token: mint({ sub: randomUUID(), tenant: `lc-${randomUUID()}` }) } })
    .invoke("Lyon bicycle");
  assert.deepEqual(elsewhere, [], "another tenant's shared memories are never found");
});

test("messages with LangChain's own ids are stored once however often the state is saved", async () => {
  const user = newUser();
  const history = new AgentMemChatMessageHistory({ client: { url, token: user.token }, sessionId: randomUUID() });
  const run = `lc_run--${randomUUID()}`;
  const state = [
    new HumanMessage({ content: "Hi, I'm Ada.", id: `${run}-0` }),
    new AIMessage({ content: "Hello Ada!", id: `run-${randomUUID()}` }),
  ];
  await history.addMessages(state);
  await history.addMessages(state); // the whole state saved again, as a graph does each run
  const got = await history.getMessages();
  assert.deepEqual(got.map((m) => [m.content, m.id]), state.map((m) => [m.content, m.id]));
});
