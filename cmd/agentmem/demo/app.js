// The agentmem demo chat: plain ES modules over the committed bundle of @agentmem/client.
// Sign in (a local token from POST /demo/token, or a pasted one), the active session resolved
// and remembered, turns committed one by one (the "assistant" echoes), the context beside them,
// recall, and a new session on request.
import { AgentMemClient, isAgentMemError, userIdFromToken } from "./agentmem-client.js";

const TOKEN_KEY = "agentmem-demo:token";
const $ = (id) => document.getElementById(id);

const params = new URLSearchParams(location.search);
const api = (params.get("api") || location.origin).replace(/\/+$/, "");
$("api-url").textContent = api;

const state = { token: null, client: null, chat: null, lastQuery: "", busy: 0, unsubscribe: null };

function setBusy(delta) {
  state.busy += delta;
  document.body.dataset.state = state.busy > 0 ? "busy" : "idle";
}

// run does one user action: busy while it runs, its error shown, the previous error cleared.
async function run(action) {
  setBusy(1);
  try {
    hideError();
    await action();
  } catch (err) {
    showError(err);
  } finally {
    setBusy(-1);
  }
}

function showError(err) {
  const box = $("error");
  box.replaceChildren();
  const head = document.createElement("div");
  if (isAgentMemError(err)) {
    head.textContent = err.status
      ? `${err.status} ${err.title || err.code}: ${err.detail}`
      : `${err.code}: ${err.detail}`;
    box.dataset.status = String(err.status);
    box.dataset.code = err.code;
    if (err.errors.length) {
      const ul = document.createElement("ul");
      for (const f of err.errors) {
        const li = document.createElement("li");
        li.textContent = `${f.field}: ${f.message}`;
        ul.append(li);
      }
      box.append(head, ul);
    } else {
      box.append(head);
    }
    if (err.requestId) {
      const rid = document.createElement("small");
      rid.textContent = `request ${err.requestId}`;
      box.append(rid);
    }
  } else {
    head.textContent = String(err?.message || err);
    box.dataset.status = "0";
    box.dataset.code = "client";
    box.append(head);
  }
  box.hidden = false;
}

function hideError() {
  $("error").hidden = true;
  $("error").replaceChildren();
}

function text(content) {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.filter((p) => p.type === "text").map((p) => p.text).join("\n");
  return "";
}

function item(list, content, extra) {
  const li = document.createElement("li");
  li.textContent = content;
  if (extra) li.append(extra);
  list.append(li);
  return li;
}

function small(cls, content) {
  const s = document.createElement("span");
  s.className = cls;
  s.textContent = content;
  return s;
}

function setSignedIn(on) {
  $("signin").hidden = on;
  $("account").hidden = !on;
  for (const id of ["new-session", "message", "send", "recall-query", "recall"]) $(id).disabled = !on;
  if (!on) {
    $("session-id").textContent = "none";
    $("session-status").textContent = "";
    document.body.dataset.session = "";
    for (const id of ["messages", "ctx-window", "ctx-memories", "recall-results"]) $(id).replaceChildren();
    $("ctx-user-memory").textContent = "{}";
    $("ctx-notes").textContent = "none";
    $("usage").textContent = "";
  }
}

function showSession(id, status) {
  $("session-id").textContent = id;
  $("session-status").textContent = status;
  document.body.dataset.session = id;
}

// signIn starts the client with token: the session is resolved (the remembered one when it is
// still active) before the page counts as signed in.
async function signIn(token) {
  const agent = $("agent").value.trim();
  const client = new AgentMemClient({ url: api, token: () => state.token, retries: 2, timeoutMs: 15000 });
  state.token = token;
  const chat = client.session({ agent });
  let info;
  try {
    info = await chat.start();
  } catch (err) {
    state.token = null;
    localStorage.removeItem(TOKEN_KEY);
    throw err;
  }
  state.unsubscribe?.();
  state.client = client;
  state.chat = chat;
  localStorage.setItem(TOKEN_KEY, token);
  $("who").textContent = userIdFromToken(token) ?? "unknown";
  $("who-agent").textContent = chat.agent;
  setSignedIn(true);
  showSession(
    info.sessionId,
    info.matched ? "(remembered, still active)" : info.remembered ? "(remembered one was replaced)" : info.created ? "(new)" : "(active)",
  );
  // Another tab of this user and agent started a session: follow it.
  state.unsubscribe = chat.subscribe((id) => {
    showSession(id, "(changed in another tab)");
    run(() => refresh());
  });
  await refresh();
  // Resumed with messages: show the memories for the last thing the user said.
  const lastUser = [...$("ctx-window").children].reverse().find((li) => li.dataset.role === "user");
  if (lastUser) {
    state.lastQuery = lastUser.dataset.text;
    await refresh();
  }
}

async function refresh(query = state.lastQuery) {
  const ctx = await state.chat.context({ max_messages: 50, ...(query ? { query, recall_k: 5 } : {}) });
  const msgs = $("messages");
  msgs.replaceChildren();
  for (const m of ctx.messages) {
    const li = item(msgs, "", null);
    li.className = m.role;
    li.dataset.seq = String(m.seq);
    li.append(small("seq", `#${m.seq}`), document.createTextNode(text(m.content)));
  }
  msgs.scrollTop = msgs.scrollHeight;
  const win = $("ctx-window");
  win.replaceChildren();
  for (const m of ctx.messages) {
    const li = document.createElement("li");
    li.dataset.role = m.role;
    li.dataset.text = text(m.content);
    li.append(small("role", m.role), document.createTextNode(text(m.content)));
    win.append(li);
  }
  $("usage").textContent = `${ctx.usage.messages} messages, ~${ctx.usage.token_estimate} tokens${ctx.usage.truncated ? ", truncated" : ""}`;
  $("ctx-query").textContent = query ? `for “${query}”` : "(send a message to query)";
  const mem = $("ctx-memories");
  mem.replaceChildren();
  for (const h of ctx.memories) item(mem, h.content, small("score", h.score.toFixed(3)));
  $("ctx-user-memory").textContent = JSON.stringify(ctx.user_memory, null, 2);
  $("ctx-notes").textContent = ctx.notes ?? "none";
}

async function send(input) {
  const agent = state.chat.agent;
  if (input.startsWith("/note ")) {
    await state.client.notes.append({ agent, content: input.slice(6) });
    return refresh();
  }
  const set = /^\/set\s+(\S+)\s+([\s\S]+)$/.exec(input);
  if (set) {
    await state.client.userMemory.set({ key: set[1], value: { value: set[2] } });
    return refresh();
  }
  const remember = $("remember").checked;
  await state.chat.commit(
    [
      { role: "user", content: input },
      { role: "assistant", content: `Echo: ${input}` },
    ],
    remember ? { memories: [{ content: input, metadata: { source: "demo" } }] } : {},
  );
  state.lastQuery = input;
  await refresh(input);
}

$("signin").addEventListener("submit", (e) => {
  e.preventDefault();
  run(async () => {
    const userId = $("user-id").value.trim();
    const res = await fetch("/demo/token", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(userId ? { user_id: userId } : {}),
    });
    const body = await res.json().catch(() => ({}));
    if (!res.ok) {
      throw new Error(
        res.status === 404
          ? "this server mints no local tokens (not on a loopback address, or no HS256 secret): paste one"
          : `local token: ${body.detail || res.statusText}`,
      );
    }
    await signIn(body.access_token);
  });
});

$("signin-token").addEventListener("click", () => {
  run(() => signIn($("token").value.trim()));
});

$("signout").addEventListener("click", () => {
  state.unsubscribe?.();
  state.chat?.close();
  state.token = null;
  state.client = null;
  state.chat = null;
  state.lastQuery = "";
  localStorage.removeItem(TOKEN_KEY);
  hideError();
  setSignedIn(false);
});

$("new-session").addEventListener("click", () => {
  run(async () => {
    const info = await state.chat.newSession();
    showSession(info.sessionId, "(new)");
    state.lastQuery = "";
    await refresh("");
  });
});

$("composer").addEventListener("submit", (e) => {
  e.preventDefault();
  const input = $("message").value.trim();
  if (!input) return;
  run(async () => {
    await send(input);
    $("message").value = "";
    $("remember").checked = false;
  });
});

$("recall-form").addEventListener("submit", (e) => {
  e.preventDefault();
  const query = $("recall-query").value.trim();
  if (!query) return;
  run(async () => {
    const { results } = await state.client.recall({ query, agent: state.chat.agent, k: 5 });
    const list = $("recall-results");
    list.replaceChildren();
    if (results.length === 0) item(list, "nothing found");
    for (const r of results) item(list, r.content, small("score", r.score.toFixed(3)));
  });
});

setSignedIn(false);
const saved = localStorage.getItem(TOKEN_KEY);
if (saved) {
  run(() => signIn(saved));
} else {
  document.body.dataset.state = "idle";
}
