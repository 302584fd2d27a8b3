// Errors, retries, Idempotency-Key, time limits and tokens, against the real server (with a
// local HTTP proxy in front of it where a test needs an answer the server cannot be made to
// give on demand: a 503, a 429, a lost answer, a slow answer).
import { randomUUID } from "node:crypto";
import assert from "node:assert/strict";
import { test } from "node:test";

import { AgentMemClient, AgentMemError, isAgentMemError, parseRetryAfter, supabaseToken } from "../../dist/index.js";
import { mint, newUser, problem, proxy, url } from "../helpers.mjs";

const turn = (text) => [
  { role: "user", content: text },
  { role: "assistant", content: `Echo: ${text}` },
];

test("a 401 is an AgentMemError with the problem fields and the request id", async () => {
  const client = new AgentMemClient({ url, token: "not-a-token" });
  const err = await client.activeSession({ agent: "x" }).then(
    () => assert.fail("resolved"),
    (e) => e,
  );
  assert.ok(err instanceof AgentMemError);
  assert.ok(isAgentMemError(err));
  assert.equal(err.name, "AgentMemError");
  assert.equal(err.status, 401);
  assert.equal(err.code, "unauthenticated");
  assert.equal(err.title, "Unauthorized");
  assert.ok(err.detail.length > 0);
  assert.match(err.requestId, /^[0-9a-f-]{36}$/);
  assert.equal(err.fn, "active-session");
  assert.equal(err.retryable, false);
  assert.match(err.message, /^401 unauthenticated: /);
});

test("a missing token is a 401 too", async () => {
  const client = new AgentMemClient({ url, token: () => null });
  await assert.rejects(client.recall({ query: "x" }), { name: "AgentMemError", status: 401, code: "unauthenticated" });
});

test("a 400 carries every invalid field and sends the request id given", async () => {
  const client = new AgentMemClient({ url, token: newUser().token });
  const err = await client
    .commitTurn(
      { session_id: randomUUID(), agent: "bad agent!", messages: [{ role: "robot", content: "hi" }] },
      { requestId: "my-request-1" },
    )
    .catch((e) => e);
  assert.equal(err.status, 400);
  assert.equal(err.code, "invalid_request");
  assert.equal(err.requestId, "my-request-1");
  assert.ok(err.fieldError("agent"), `no agent error in ${JSON.stringify(err.errors)}`);
  assert.ok(err.fieldError("messages[0].role"), `no role error in ${JSON.stringify(err.errors)}`);
  assert.deepEqual(Object.keys(err.toJSON()).sort(), ["code", "detail", "errors", "name", "request_id", "retry_after", "status", "title"]);
});

test("another user's session is a 404, and its messages are never seen", async () => {
  const ada = newUser();
  const bob = newUser();
  const adaClient = new AgentMemClient({ url, token: ada.token });
  const bobClient = new AgentMemClient({ url, token: bob.token });
  const res = await adaClient.commitTurn({ session_id: randomUUID(), messages: turn("Ada's secret") });
  await assert.rejects(bobClient.sessions.history({ session_id: res.session_id }), { status: 404, code: "not_found" });
  await assert.rejects(bobClient.commitTurn({ session_id: res.session_id, messages: turn("hi") }), { status: 404 });
  const ctx = await bobClient.getContext({ session_id: res.session_id });
  assert.deepEqual(ctx.messages, []);
});

test("a commit sends an Idempotency-Key, reused when the answer was lost", async () => {
  const user = newUser();
  const p = await proxy((req, n) => (n === 1 ? "drop-answer" : "forward"));
  try {
    const client = new AgentMemClient({ url: p.url, token: user.token, retryBaseMs: 10 });
    const sid = randomUUID();
    const res = await client.commitTurnResponse({ session_id: sid, messages: turn("once") });
    assert.equal(p.requests.length, 2);
    const [k1, k2] = p.requests.map((r) => r.headers["idempotency-key"]);
    assert.match(k1, /^[0-9a-f-]{36}$/);
    assert.equal(k2, k1, "the retry reuses the key");
    assert.equal(res.replayed, true, "the server replayed the stored answer");
    assert.equal(res.attempts, 2);
    const ctx = await new AgentMemClient({ url, token: user.token }).getContext({ session_id: sid });
    assert.equal(ctx.messages.length, 2, "the turn is stored once");

    // Each commit gets a key of its own; a key given is sent as is.
    await client.commitTurn({ session_id: sid, messages: turn("twice") }, { idempotencyKey: "turn-7" });
    assert.equal(p.requests.at(-1).headers["idempotency-key"], "turn-7");
    assert.notEqual(p.requests.at(-1).headers["idempotency-key"], k1);
    const again = await client.commitTurnResponse({ session_id: sid, messages: turn("twice") }, { idempotencyKey: "turn-7" });
    assert.equal(again.replayed, true);
    const err = await client.commitTurn({ session_id: sid, messages: turn("other") }, { idempotencyKey: "turn-7" }).catch((e) => e);
    assert.equal(err.status, 409, "same key, another body");
  } finally {
    await p.close();
  }
});

test("503 and 429 are retried after Retry-After", async () => {
  const user = newUser();
  const p = await proxy((req, n) => {
    if (n === 1) return { status: 503, headers: { "Retry-After": "1" }, body: problem(503, "unavailable", "try again") };
    if (n === 2) return { status: 429, headers: { "Retry-After": "0" }, body: problem(429, "rate_limited", "slow down") };
    return "forward";
  });
  try {
    const client = new AgentMemClient({ url: p.url, token: user.token, retryBaseMs: 1 });
    const res = await client.recall({ query: "anything" });
    assert.deepEqual(res.results, []);
    assert.equal(p.requests.length, 3);
    const waited = p.requests[1].at - p.requests[0].at;
    assert.ok(waited >= 1000, `retried after ${waited} ms, Retry-After said 1 s`);
  } finally {
    await p.close();
  }
});

test("retries end with the last error; a Retry-After over the limit is not waited for", async () => {
  const user = newUser();
  const p = await proxy(() => ({ status: 503, headers: { "Retry-After": "0" }, body: problem(503, "unavailable", "down") }));
  try {
    const client = new AgentMemClient({ url: p.url, token: user.token, retries: 2 });
    const err = await client.recall({ query: "x" }).catch((e) => e);
    assert.equal(err.status, 503);
    assert.equal(err.code, "unavailable");
    assert.equal(err.retryAfter, 0);
    assert.equal(err.retryable, true);
    assert.equal(p.requests.length, 3);

    const long = await proxy(() => ({ status: 429, headers: { "Retry-After": "120" }, body: problem(429, "rate_limited", "later") }));
    try {
      const c2 = new AgentMemClient({ url: long.url, token: user.token, maxRetryAfterMs: 5000 });
      await assert.rejects(c2.recall({ query: "x" }), { status: 429, retryAfter: 120 });
      assert.equal(long.requests.length, 1);
    } finally {
      await long.close();
    }
  } finally {
    await p.close();
  }
});

test("network errors are retried for requests safe to repeat, not for others", async () => {
  const user = newUser();
  const p = await proxy(() => "reset");
  try {
    const client = new AgentMemClient({ url: p.url, token: user.token, retries: 2, retryBaseMs: 1 });
    const err = await client.getContext({ session_id: randomUUID() }).catch((e) => e);
    assert.equal(err.status, 0);
    assert.equal(err.code, "network_error");
    assert.ok(err.cause, "the fetch error is kept as cause");
    assert.equal(p.requests.length, 3);

    await assert.rejects(client.notes.append({ content: "x" }), { code: "network_error" });
    assert.equal(p.requests.length, 4, "append is not repeated");
    await assert.rejects(client.activeSession({ mode: "new" }), { code: "network_error" });
    assert.equal(p.requests.length, 5, "a new session is not started twice");
  } finally {
    await p.close();
  }
});

test("a slow answer times out; AbortSignal cancels calls and their waits", async () => {
  const user = newUser();
  const p = await proxy(() => ({ status: 503, headers: { "Retry-After": "5" }, body: problem(503, "unavailable", "x"), delayMs: 400 }));
  try {
    const client = new AgentMemClient({ url: p.url, token: user.token, retries: 0, timeoutMs: 100 });
    await assert.rejects(client.recall({ query: "x" }), { status: 0, code: "timeout" });

    const aborted = AbortSignal.abort();
    await assert.rejects(client.recall({ query: "x" }, { signal: aborted }), { code: "aborted" });

    // Abort while waiting out Retry-After: 5 s.
    const c2 = new AgentMemClient({ url: p.url, token: user.token, retries: 3, timeoutMs: 0 });
    const ac = new AbortController();
    const pending = c2.recall({ query: "x" }, { signal: ac.signal });
    setTimeout(() => ac.abort(), 600);
    const t0 = Date.now();
    await assert.rejects(pending, { code: "aborted" });
    assert.ok(Date.now() - t0 < 4000, "the wait ended with the abort");
  } finally {
    await p.close();
  }
});

test("the token getter is asked again, with refresh, after a 401", async () => {
  const user = newUser();
  const asked = [];
  const client = new AgentMemClient({
    url,
    token: ({ refresh }) => {
      asked.push(refresh);
      return refresh ? user.token : mint({ sub: user.id, ttl: -60 });
    },
  });
  const info = await client.activeSession({ agent: "refresh" });
  assert.equal(info.agent, "refresh");
  assert.deepEqual(asked, [false, true]);

  // The same token again: the 401 stands.
  const stale = mint({ sub: user.id, ttl: -60 });
  const c2 = new AgentMemClient({ url, token: () => stale });
  await assert.rejects(c2.activeSession({}), { status: 401 });
});

test("supabaseToken reads supabase-js's session and refreshes it after a 401", async () => {
  const user = newUser();
  const calls = [];
  // The two methods of supabase-js's auth API that supabaseToken uses, with their answer shapes.
  const supabase = {
    auth: {
      getSession: async () => (calls.push("getSession"), { data: { session: { access_token: mint({ sub: user.id, ttl: -1 }) } }, error: null }),
      refreshSession: async () => (calls.push("refreshSession"), { data: { session: { access_token: user.token }, user: null }, error: null }),
    },
  };
  const client = new AgentMemClient({ url, token: supabaseToken(supabase) });
  await client.activeSession({});
  assert.deepEqual(calls, ["getSession", "refreshSession"]);

  const signedOut = { auth: { getSession: async () => ({ data: { session: null }, error: null }), refreshSession: async () => ({ data: { session: null }, error: null }) } };
  await assert.rejects(new AgentMemClient({ url, token: supabaseToken(signedOut) }).activeSession({}), { status: 401 });
});

test("an answer that is not the API's is still an AgentMemError", async () => {
  const p = await proxy(() => ({ status: 502, headers: { "Content-Type": "text/html" }, body: "<h1>Bad gateway</h1>" }));
  try {
    const client = new AgentMemClient({ url: p.url, token: "x", retries: 0 });
    const err = await client.recall({ query: "x" }).catch((e) => e);
    assert.equal(err.status, 502);
    assert.equal(err.code, "internal");
    assert.equal(err.errors.length, 0);
  } finally {
    await p.close();
  }
});

test("parseRetryAfter reads seconds and HTTP dates", () => {
  assert.equal(parseRetryAfter("3"), 3);
  assert.equal(parseRetryAfter(null), undefined);
  assert.equal(parseRetryAfter("soon"), undefined);
  const now = Date.parse("2026-01-01T00:00:00Z");
  assert.equal(parseRetryAfter("Thu, 01 Jan 2026 00:00:10 GMT", now), 10);
});

test("functionUrls send a function to its own URL", async () => {
  const user = newUser();
  const p = await proxy(() => "forward");
  try {
    // A Lambda Function URL serves its function at every path; the proxy forwards by path, so
    // point it at the same /v1/<name> of the server under test.
    const client = new AgentMemClient({ url: "http://127.0.0.1:1", functionUrls: { recall: `${p.url}/v1/recall` }, token: user.token });
    const res = await client.recall({ query: "x" });
    assert.deepEqual(res, { results: [], matched: false });
    assert.equal(p.requests[0].path, "/v1/recall");
  } finally {
    await p.close();
  }
});
