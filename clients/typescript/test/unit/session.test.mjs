// The session lifecycle of a chat frontend, against the real server.
import { randomUUID } from "node:crypto";
import assert from "node:assert/strict";
import { test } from "node:test";

import { AgentMemClient, MemoryStorage, sessionKey } from "../../dist/index.js";
import { newUser, url } from "../helpers.mjs";

const clientFor = (user) => new AgentMemClient({ url, token: user.token });

test("start creates, remembers and then matches the active session", async () => {
  const user = newUser();
  const storage = new MemoryStorage();
  const tab1 = clientFor(user).session({ agent: "support", storage });

  const first = await tab1.start();
  assert.equal(first.created, true);
  assert.equal(first.matched, false);
  assert.equal(first.remembered, undefined);
  assert.equal(tab1.id, first.sessionId);
  assert.equal(storage.getItem(sessionKey(user.id, "support")), first.sessionId);
  assert.equal(storage.getItem(`agentmem:session:${user.id}:support`), first.sessionId);

  // A reload: a new object over the same storage resumes the remembered session.
  const reloaded = clientFor(user).session({ agent: "support", storage });
  const again = await reloaded.start();
  assert.equal(again.sessionId, first.sessionId);
  assert.equal(again.matched, true);
  assert.equal(again.created, false);
  assert.equal(again.remembered, first.sessionId);
});

test("new session replaces the active one everywhere; a stale remembered id is replaced", async () => {
  const user = newUser();
  const phone = new MemoryStorage();
  const laptop = new MemoryStorage();
  const onPhone = clientFor(user).session({ agent: "a", storage: phone });
  const onLaptop = clientFor(user).session({ agent: "a", storage: laptop });

  const first = await onPhone.start();
  const laptopFirst = await onLaptop.start();
  assert.equal(laptopFirst.sessionId, first.sessionId, "a second device finds the same active session");
  assert.equal(laptopFirst.matched, false, "nothing was remembered on the second device");

  const seen = [];
  onLaptop.subscribe((id) => seen.push(id));
  const fresh = await onLaptop.newSession();
  assert.equal(fresh.created, true);
  assert.notEqual(fresh.sessionId, first.sessionId);
  assert.deepEqual(seen, [fresh.sessionId]);
  assert.equal(laptop.getItem(sessionKey(user.id, "a")), fresh.sessionId);

  // The phone still remembers the old one: the server says it is no longer active.
  const phoneAgain = await clientFor(user).session({ agent: "a", storage: phone }).start();
  assert.equal(phoneAgain.remembered, first.sessionId);
  assert.equal(phoneAgain.matched, false);
  assert.equal(phoneAgain.sessionId, fresh.sessionId);
  assert.equal(phone.getItem(sessionKey(user.id, "a")), fresh.sessionId, "the active id is remembered");
});

test("several tabs starting at once agree on one session", async () => {
  const user = newUser();
  const storage = new MemoryStorage();
  const tabs = Array.from({ length: 5 }, () => clientFor(user).session({ agent: "tabs", storage }));
  const infos = await Promise.all(tabs.map((t) => t.start()));
  const ids = new Set(infos.map((i) => i.sessionId));
  assert.equal(ids.size, 1, `tabs got ${[...ids].join(", ")}`);
  assert.equal(infos.filter((i) => i.created).length, 1, "exactly one start created the session");
});

test("users and agents have sessions and storage keys of their own", async () => {
  const ada = newUser();
  const bob = newUser();
  const storage = new MemoryStorage();
  const a = await clientFor(ada).session({ agent: "x", storage }).start();
  const b = await clientFor(bob).session({ agent: "x", storage }).start();
  const a2 = await clientFor(ada).session({ agent: "y", storage }).start();
  assert.notEqual(a.sessionId, b.sessionId);
  assert.notEqual(a.sessionId, a2.sessionId);
  assert.equal(b.matched, false, "another user's remembered id is never used");
  assert.equal(storage.getItem(sessionKey(ada.id, "x")), a.sessionId);
  assert.equal(storage.getItem(sessionKey(bob.id, "x")), b.sessionId);
  assert.equal(storage.getItem(sessionKey(ada.id, "y")), a2.sessionId);
});

test("a remembered value that is not a UUID is ignored", async () => {
  const user = newUser();
  const storage = new MemoryStorage();
  storage.setItem(sessionKey(user.id, "default"), "garbage");
  const info = await clientFor(user).session({ storage }).start();
  assert.equal(info.remembered, undefined);
  assert.equal(info.created, true);
  assert.equal(storage.getItem(sessionKey(user.id, "default")), info.sessionId);
});

test("activate makes an unused id the active session", async () => {
  const user = newUser();
  const storage = new MemoryStorage();
  const chat = clientFor(user).session({ agent: "act", storage });
  await chat.start();
  const id = randomUUID();
  const info = await chat.activate(id);
  assert.equal(info.sessionId, id);
  assert.equal(info.matched, true);
  const other = await clientFor(user).session({ agent: "act", storage: new MemoryStorage() }).start();
  assert.equal(other.sessionId, id);
});

test("an async storage works like localStorage", async () => {
  const user = newUser();
  const map = new Map();
  const storage = {
    getItem: async (k) => map.get(k) ?? null,
    setItem: async (k, v) => void map.set(k, v),
    removeItem: async (k) => void map.delete(k),
  };
  const first = await clientFor(user).session({ storage }).start();
  const second = await clientFor(user).session({ storage }).start();
  assert.equal(second.matched, true);
  assert.equal(second.sessionId, first.sessionId);
  const chat = clientFor(user).session({ storage });
  await chat.start();
  await chat.forget();
  assert.equal(map.size, 0);
});

test("commit and context go to the started session", async () => {
  const user = newUser();
  const chat = clientFor(user).session({ agent: "turns", storage: new MemoryStorage() });
  // commit starts the session when needed.
  const res = await chat.commit(
    [
      { role: "user", content: "My name is Ada and I prefer metric units." },
      { role: "assistant", content: "Noted, Ada." },
    ],
    { memories: [{ content: "Ada prefers metric units.", metadata: { kind: "preference" } }] },
  );
  assert.equal(res.session_id, chat.id);
  assert.equal(res.messages.length, 2);
  assert.ok(res.messages[1].seq > res.messages[0].seq);
  assert.equal(res.memories.length, 1);

  const ctx = await chat.context({ query: "metric units", recall_k: 3 });
  assert.deepEqual(
    ctx.messages.map((m) => [m.role, m.content]),
    [
      ["user", "My name is Ada and I prefer metric units."],
      ["assistant", "Noted, Ada."],
    ],
  );
  assert.equal(ctx.memories[0]?.content, "Ada prefers metric units.");
  assert.equal(ctx.usage.messages, 2);

  const openai = await chat.context({ format: "openai" });
  assert.deepEqual(openai.messages[0], { role: "user", content: "My name is Ada and I prefer metric units." });

  const hist = await chat.history({ order: "oldest" });
  assert.equal(hist.total, 2);
  assert.equal(hist.messages[0].content, "My name is Ada and I prefer metric units.");
});

test("a token without a user id still reaches the server, which answers", async () => {
  const storage = new MemoryStorage();
  const chat = new AgentMemClient({ url, token: "not-a-token" }).session({ storage });
  await assert.rejects(chat.start(), { name: "AgentMemError", status: 401, code: "unauthenticated" });
  assert.equal(storage.getItem(sessionKey("undefined", "default")), null);
});

test("a service caller keeps the session of the user it acts for", async () => {
  const { serviceToken } = await import("../helpers.mjs");
  const user = newUser();
  const storage = new MemoryStorage();
  const client = new AgentMemClient({ url, token: serviceToken() });
  const info = await client.session({ agent: "svc", storage, scope: { user_id: user.id } }).start();
  assert.equal(storage.getItem(sessionKey(user.id, "svc")), info.sessionId);
  // The user's own client finds the same active session.
  const own = await clientFor(user).session({ agent: "svc", storage }).start();
  assert.equal(own.sessionId, info.sessionId);
  assert.equal(own.matched, true);
});
