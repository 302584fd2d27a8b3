// Every function and op of the client, against the real server.
import { randomUUID } from "node:crypto";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { test } from "node:test";

import { AgentMemClient, FUNCTIONS } from "../../dist/index.js";
import { newUser, proxy, serviceToken, url } from "../helpers.mjs";

test("every function of docs/openapi.yaml has a method", async () => {
  const doc = await readFile(new URL("../../../../docs/openapi.yaml", import.meta.url), "utf8");
  const paths = [...doc.matchAll(/^ {2}\/v1\/([a-z-]+):$/gm)].map((m) => m[1]);
  assert.ok(paths.length >= 12, `found ${paths.length} paths`);
  for (const p of paths) assert.ok(FUNCTIONS.includes(p), `function ${p} of the API document is missing from the client`);
  const generated = await readFile(new URL("../../src/generated/openapi.ts", import.meta.url), "utf8");
  for (const p of paths) assert.ok(generated.includes(`"/v1/${p}": {`), `generated types lack /v1/${p}: run npm run generate`);
});

test("user-memory, user-state and notes", async () => {
  const am = new AgentMemClient({ url, token: newUser().token });
  assert.equal((await am.userMemory.set({ key: "lang", value: { code: "en" } })).created, true);
  assert.equal((await am.userMemory.set({ key: "lang", value: { code: "fr" } })).created, false);
  assert.deepEqual((await am.userMemory.get({ key: "lang" })).value, { code: "fr" });
  assert.deepEqual((await am.userMemory.list()).items.map((i) => i.key), ["lang"]);
  assert.equal((await am.userMemory.delete({ key: "lang" })).deleted, 1);
  await assert.rejects(am.userMemory.get({ key: "lang" }), { status: 404, code: "not_found" });
  await am.userMemory.set({ key: "a", value: {} });
  assert.equal((await am.userMemory.clear()).deleted, 1);

  assert.equal((await am.userState.set({ mode: "active" })).mode, "active");
  assert.equal((await am.userState.get()).mode, "active");
  await am.userState.delete();
  await assert.rejects(am.userState.get(), { status: 404 });

  const agent = "notes-bot";
  assert.equal((await am.notes.read({ agent })).content, "");
  await am.notes.overwrite({ agent, content: "# Profile\nAda\n" });
  await am.notes.append({ agent, content: "# Preferences\nmetric\n" });
  await am.notes.prepend({ agent, content: "Notes about Ada.\n" });
  const replaced = await am.notes.replaceSection({ agent, section: "# Preferences", content: "# Preferences\nimperial\n" });
  assert.equal(replaced.section_created, false);
  assert.match(replaced.content, /imperial/);
  const deleted = await am.notes.deleteSection({ agent, section: "# Profile" });
  assert.doesNotMatch(deleted.content, /# Profile/);
  assert.equal((await am.notes.clear({ agent })).deleted, true);
});

test("sessions and memories", async () => {
  const am = new AgentMemClient({ url, token: newUser().token });
  const sid = randomUUID();
  const res = await am.commitTurn({
    session_id: sid,
    agent: "s",
    messages: [
      { role: "user", content: "first" },
      { role: "assistant", content: "second" },
    ],
    memories: [{ content: "The user's dog is called Rex.", metadata: { kind: "pet" } }],
  });
  const list = await am.sessions.list({ agent: "s" });
  assert.equal(list.sessions[0].session_id, sid);
  assert.equal(list.sessions[0].message_count, 2);
  const page = await am.sessions.history({ session_id: sid, order: "newest", limit: 1 });
  assert.equal(page.messages[0].content, "second");
  assert.equal(page.total, 2);
  assert.ok(page.next_cursor);
  const rest = await am.sessions.history({ session_id: sid, order: "newest", limit: 1, cursor: page.next_cursor });
  assert.equal(rest.messages[0].content, "first");
  assert.equal((await am.sessions.setTitle({ session_id: sid, title: "Dogs" })).title, "Dogs");
  assert.deepEqual((await am.sessions.setMetadata({ session_id: sid, metadata: { pet: "dog" } })).metadata, { pet: "dog" });
  assert.deepEqual((await am.sessions.list({ agent: "s" })).sessions[0].metadata, { pet: "dog" });
  await am.sessions.deleteMessage({ session_id: sid, message_id: res.messages[0].id });
  assert.equal((await am.sessions.history({ session_id: sid })).total, 1);
  await am.sessions.reset({ session_id: sid });
  assert.equal((await am.sessions.history({ session_id: sid })).total, 0);
  await am.sessions.delete({ session_id: sid });
  await assert.rejects(am.sessions.history({ session_id: sid }), { status: 404 });

  const mems = await am.memories.list();
  const id = res.memories[0].id;
  assert.deepEqual(mems.items.map((m) => m.id), [id]);
  assert.equal((await am.memories.get({ id })).content, "The user's dog is called Rex.");
  assert.equal((await am.memories.update({ id, content: "The user's dog is called Max." })).content, "The user's dog is called Max.");
  const found = await am.recall({ query: "dog", k: 3, filter: { kind: "pet" } });
  assert.equal(found.results[0]?.id, id);
  await am.memories.delete({ id });
  await assert.rejects(am.memories.get({ id }), { status: 404 });
});

test("the user's history across sessions, since, clear and memories create", async () => {
  const am = new AgentMemClient({ url, token: newUser().token });
  const [s1, s2] = [randomUUID(), randomUUID()];
  await am.commitTurn({ session_id: s1, messages: [{ role: "user", content: "one" }] });
  await am.commitTurn({ session_id: s2, agent: "bot", messages: [{ role: "user", content: "two" }, { role: "assistant", content: "three" }] });
  const page = await am.sessions.history({ limit: 2 });
  assert.deepEqual(page.messages.map((m) => [m.content, m.session_id]), [["three", s2], ["two", s2]]);
  assert.equal(page.total, 3);
  const rest = await am.sessions.history({ limit: 2, cursor: page.next_cursor });
  assert.deepEqual(rest.messages.map((m) => [m.content, m.session_id]), [["one", s1]]);
  assert.equal(rest.next_cursor, null);
  assert.equal((await am.sessions.history({ agent: "bot" })).total, 2);
  const future = new Date(Date.now() + 3600_000).toISOString();
  assert.equal((await am.sessions.history({ since: future })).total, 0);
  assert.equal((await am.sessions.history({ session_id: s1, since: future })).total, 0);
  await assert.rejects(am.sessions.history({ since: "yesterday" }), (e) => e.status === 400 && e.errors.some((f) => f.field === "since"));

  assert.equal((await am.sessions.clear({ agent: "bot" })).deleted, 2);
  assert.equal((await am.sessions.clear()).deleted, 1);
  assert.equal((await am.sessions.list()).sessions.length, 2);

  const first = await am.memories.create({ content: "Prefers tea.", metadata: { kind: "drink" } });
  assert.equal(first.merged, false);
  const again = await am.memories.create({ content: "prefers tea", agent: "default" });
  assert.deepEqual(again, { id: first.id, merged: true, content_changed: false });
  const res = await am.call("memories", { op: "create", content: "Has a cat." }, { idempotent: true, idempotencyKey: "cat-1" });
  const replay = await am.call("memories", { op: "create", content: "Has a cat." }, { idempotent: true, idempotencyKey: "cat-1" });
  assert.equal(res.status, 201);
  assert.equal(replay.status, 201);
  assert.equal(replay.replayed, true);
  assert.deepEqual(replay.data, res.data);
  assert.equal((await am.memories.list()).items.length, 2);
});

test("knowledge, sweep-expired and forget-user", async () => {
  const service = new AgentMemClient({ url, token: serviceToken() });
  const tenant = `t${Date.now()}`;
  const ingested = await service.knowledge.ingest({ tenant_id: tenant, source: "faq.md", content: "# Returns\n\nRefunds are paid within five days." });
  assert.ok(ingested.chunks >= 1);
  const hits = await service.knowledge.search({ tenant_id: tenant, query: "refunds", k: 2 });
  assert.match(hits.results[0].content, /Refunds/);
  assert.equal((await service.knowledge.delete({ tenant_id: tenant, source: "faq.md" })).source, "faq.md");

  const swept = await service.sweepExpired({ dry_run: true });
  assert.equal(typeof swept.more, "boolean");
  const user = newUser();
  await assert.rejects(new AgentMemClient({ url, token: user.token }).sweepExpired(), { status: 403, code: "forbidden" });

  const am = new AgentMemClient({ url, token: user.token });
  await am.userMemory.set({ key: "k", value: {} });
  const gone = await am.forgetUser();
  assert.equal(gone.user_id, user.id);
  assert.ok(Object.values(gone.deleted).some((n) => n >= 1), JSON.stringify(gone));
  assert.deepEqual((await am.userMemory.list()).items, []);
  // A service caller names the user.
  const other = newUser();
  await new AgentMemClient({ url, token: other.token }).userMemory.set({ key: "k", value: {} });
  await service.forgetUser({ user_id: other.id });
  assert.deepEqual((await service.userMemory.list({ user_id: other.id })).items, []);
});

test("v1.1 functions and ops are sent as the contract names them", async () => {
  // Recorded on their way to the server; the server answers what it supports today.
  const user = newUser();
  const p = await proxy(() => "forward");
  try {
    const am = new AgentMemClient({ url: p.url, token: user.token, retries: 0 });
    const sid = randomUUID();
    const settle = (x) => x.then(
      () => "ok",
      (e) => {
        assert.equal(e.name, "AgentMemError");
        assert.ok([400, 403, 404].includes(e.status), `${e.status} ${e.detail}`);
        return e.status;
      },
    );
    await settle(am.memories.create({ content: "likes tea", metadata: { k: 1 } }));
    await settle(am.sessions.clear({ agent: "x" }));
    await settle(am.intents({ type: "syncSession", session_id: sid }));
    await settle(am.jobs.list({ status: "dead" }));
    await settle(am.jobs.retry({ id: sid }));
    await settle(am.processJobs({ limit: 5 }));
    await settle(am.getContext({ session_id: sid, format: "anthropic", answers_only: true }));
    await settle(am.recall({ query: "tea", source: "all" }));
    const sent = p.requests.map((r) => [r.path, JSON.parse(r.body)]);
    assert.deepEqual(sent, [
      ["/v1/memories", { content: "likes tea", metadata: { k: 1 }, op: "create" }],
      ["/v1/sessions", { agent: "x", op: "clear" }],
      ["/v1/intents", { type: "syncSession", session_id: sid }],
      ["/v1/jobs", { status: "dead", op: "list" }],
      ["/v1/jobs", { id: sid, op: "retry" }],
      ["/v1/process-jobs", { limit: 5 }],
      ["/v1/get-context", { session_id: sid, format: "anthropic", answers_only: true }],
      ["/v1/recall", { query: "tea", source: "all" }],
    ]);
    assert.ok(p.requests[0].headers["idempotency-key"], "memories create takes an Idempotency-Key");
    assert.equal(p.requests[1].headers["idempotency-key"], undefined);
  } finally {
    await p.close();
  }
});
