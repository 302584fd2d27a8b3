// Helpers of the client's tests: the server under test (AGENTMEM_URL, started by
// scripts/test-js.sh against a database of its own) and local access tokens for it.
import { createHmac, randomUUID } from "node:crypto";
import { createServer } from "node:http";

export const url = process.env.AGENTMEM_URL;
if (!url) {
  throw new Error(
    "AGENTMEM_URL is not set: run the tests with scripts/test-js.sh (or make test), which starts agentmem serve on a test database",
  );
}

const secret = process.env.SUPABASE_JWT_SECRET || "super-secret-jwt-token-with-at-least-32-characters-long";

const b64url = (v) => Buffer.from(typeof v === "string" ? v : JSON.stringify(v)).toString("base64url");

/** mint signs an HS256 access token as the local server expects it. */
export function mint({ sub, role = "authenticated", ttl = 3600, tenant } = {}) {
  const now = Math.floor(Date.now() / 1000);
  const claims = { role, iat: now, exp: now + ttl };
  if (sub) claims.sub = sub;
  if (role === "authenticated") claims.aud = "authenticated";
  if (tenant) claims.app_metadata = { tenant_id: tenant };
  const head = b64url({ alg: "HS256", typ: "JWT" }) + "." + b64url(claims);
  return head + "." + createHmac("sha256", secret).update(head).digest("base64url");
}

/** newUser is a fresh user id and its token. */
export function newUser() {
  const id = randomUUID();
  return { id, token: mint({ sub: id }) };
}

/** serviceToken is a service_role token. */
export const serviceToken = () => mint({ role: "service_role" });

/**
 * proxy starts a local HTTP server in front of the server under test. handle(req, body, n) is
 * called for each request (n counts from 1) and answers: "forward" to pass it on, "drop-answer"
 * to pass it on and then cut the connection without answering, "reset" to cut it at once,
 * {forward: true, headers} to pass it on and add headers to the answer, or {status, headers,
 * body, delayMs} to answer itself. It resolves to {url, requests, close}.
 */
export async function proxy(handle) {
  const requests = [];
  const sockets = new Set();
  const server = createServer(async (req, res) => {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const body = Buffer.concat(chunks).toString("utf8");
    const rec = { at: Date.now(), method: req.method, path: req.url, headers: req.headers, body };
    requests.push(rec);
    const action = await handle(rec, requests.length);
    if (action === "reset") {
      req.socket.destroy();
      return;
    }
    if (action === "forward" || action === "drop-answer" || action.forward) {
      const headers = { ...req.headers };
      delete headers.host;
      delete headers.connection;
      const upstream = await fetch(url + req.url, { method: req.method, headers, body: req.method === "POST" ? body : undefined });
      const text = await upstream.text();
      if (action === "drop-answer") {
        req.socket.destroy();
        return;
      }
      const out = {};
      upstream.headers.forEach((v, k) => {
        if (k !== "content-length" && k !== "content-encoding" && k !== "transfer-encoding" && k !== "connection") out[k] = v;
      });
      res.writeHead(upstream.status, { ...out, ...(action.forward ? action.headers : {}) });
      res.end(text);
      return;
    }
    if (action.delayMs) await new Promise((r) => setTimeout(r, action.delayMs));
    if (res.destroyed) return;
    res.writeHead(action.status, { "Content-Type": "application/problem+json", ...action.headers });
    res.end(typeof action.body === "string" ? action.body : JSON.stringify(action.body ?? {}));
  });
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise((r) => {
        for (const s of sockets) s.destroy();
        server.close(r);
      }),
  };
}

/** problem is a problem+json body as the server writes it. */
export function problem(status, code, detail) {
  return { type: "about:blank", title: code, status, code, detail, request_id: randomUUID() };
}
