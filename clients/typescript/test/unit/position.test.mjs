// Agentmem-Position: the client keeps the greatest position an answer gives and sends it with
// every later request, so that a deployment with read replicas answers its reads from a replica
// only once that has replayed its writes. The server under test has no replica and gives no
// position: a proxy in front of it adds the header to the answers, as such a deployment would.
import { randomUUID } from "node:crypto";
import assert from "node:assert/strict";
import { test } from "node:test";

import { AgentMemClient, POSITION_HEADER, isPosition } from "../../dist/index.js";
import { newUser, proxy } from "../helpers.mjs";

const turn = (text) => [
  { role: "user", content: text },
  { role: "assistant", content: `Echo: ${text}` },
];

test("the greatest position given is sent with every later request, per client", async () => {
  const user = newUser();
  // The answers' positions, in the order of the requests: a lower one arriving later (an
  // answer overtaken by another), a malformed one, then a greater one.
  const given = ["00000000000A0000", "0000000000090000", undefined, "not-a-position", "00000000000B0000"];
  const p = await proxy((req, n) => {
    const pos = given[n - 1];
    return pos === undefined ? "forward" : { forward: true, headers: { [POSITION_HEADER]: pos } };
  });
  try {
    const client = new AgentMemClient({ url: p.url, token: user.token });
    const other = new AgentMemClient({ url: p.url, token: user.token });
    assert.equal(client.position, undefined);
    const sid = randomUUID();
    const res = await client.commitTurnResponse({ session_id: sid, messages: turn("one") });
    assert.equal(res.position, "00000000000A0000");
    assert.equal(client.position, "00000000000A0000");
    await client.commitTurn({ session_id: sid, messages: turn("two") });
    assert.equal(client.position, "00000000000A0000", "a lower position does not replace a greater one");
    const ctx = await client.getContext({ session_id: sid });
    assert.equal(ctx.messages.length, 4);
    await client.sessions.history({ session_id: sid });
    assert.equal(client.position, "00000000000A0000", "a malformed position is ignored");
    await client.recall({ query: "one" });
    assert.equal(client.position, "00000000000B0000");
    await other.getContext({ session_id: sid });

    const sent = p.requests.map((r) => r.headers[POSITION_HEADER.toLowerCase()]);
    assert.deepEqual(sent, [undefined, "00000000000A0000", "00000000000A0000", "00000000000A0000", "00000000000A0000", undefined]);
    assert.equal(other.position, undefined, "another client keeps its own");
  } finally {
    await p.close();
  }
});

test("a position given at construction is sent from the first request; a malformed one is not", async () => {
  const user = newUser();
  const p = await proxy(() => "forward");
  try {
    const sid = randomUUID();
    await new AgentMemClient({ url: p.url, token: user.token, position: "00000000000c0000" }).getContext({ session_id: sid });
    await new AgentMemClient({ url: p.url, token: user.token, position: "0/C0000" }).getContext({ session_id: sid });
    assert.deepEqual(
      p.requests.map((r) => r.headers[POSITION_HEADER.toLowerCase()]),
      ["00000000000C0000", undefined],
    );
    assert.equal(isPosition("00000000000C0000"), true);
    assert.equal(isPosition("0/C0000"), false);
  } finally {
    await p.close();
  }
});
