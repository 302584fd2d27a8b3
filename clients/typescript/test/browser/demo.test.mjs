// The demo page (/demo) in a real Chromium (Debian's, driven by playwright-core: no browser
// download), against the real server. The page is loaded from http://localhost:<port> and
// calls the API at http://127.0.0.1:<port>: another origin, so CORS and preflights are real.
import { randomUUID } from "node:crypto";
import assert from "node:assert/strict";
import { stat } from "node:fs/promises";
import { after, before, test } from "node:test";

import { chromium } from "playwright-core";

import { url } from "../helpers.mjs";

const executablePath = process.env.CHROMIUM || "/usr/bin/chromium";
const screenshot = process.env.AGENTMEM_DEMO_SCREENSHOT;
const port = new URL(url).port;
const pageURL = `http://localhost:${port}/demo/?api=${encodeURIComponent(url)}`;

let browser;

before(async () => {
  // playwright-core starts Chromium with a fresh temporary --user-data-dir of its own (it
  // refuses one in args) and removes it when the browser closes.
  browser = await chromium.launch({
    executablePath,
    headless: true,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
});

after(async () => {
  await browser?.close();
});

// newContext is one browser profile (its own localStorage): one person's browser.
async function newContext() {
  const context = await browser.newContext({ viewport: { width: 1280, height: 720 } });
  context.setDefaultTimeout(15000);
  return context;
}

// open loads the page and waits until it has settled.
async function open(context) {
  const page = await context.newPage();
  const problems = [];
  page.on("pageerror", (e) => problems.push(String(e)));
  page.problems = problems;
  await page.goto(pageURL);
  await idle(page);
  return page;
}

test("the page loads without a failed request or a console error (its icon included)", async () => {
  const context = await newContext();
  const page = await context.newPage();
  const problems = [];
  page.on("console", (m) => m.type() === "error" && problems.push(`console: ${m.text()}`));
  page.on("requestfailed", (r) => problems.push(`failed: ${r.url()}`));
  page.on("response", (r) => r.status() >= 400 && problems.push(`${r.status()}: ${r.url()}`));
  await page.goto(pageURL);
  await idle(page);
  // The browser asks for an icon once the page has loaded; give it the time to.
  await page.waitForLoadState("networkidle");
  assert.deepEqual(problems, []);
  assert.match(await page.getAttribute('link[rel="icon"]', "href"), /^data:image\/svg\+xml,/);
  await context.close();
});

async function idle(page) {
  await page.waitForFunction(() => document.body.dataset.state === "idle");
}

// act clicks or submits, then waits for the page's work to end.
async function act(page, fn) {
  await fn();
  await idle(page);
}

async function signIn(page, userId, agent = "demo") {
  await page.fill("#agent", agent);
  await page.fill("#user-id", userId ?? "");
  await act(page, () => page.click("#signin-local"));
}

async function sessionId(page) {
  return page.getAttribute("body", "data-session");
}

async function send(page, text, { remember = false } = {}) {
  await page.fill("#message", text);
  if (remember) await page.check("#remember");
  await act(page, () => page.click("#send"));
}

const texts = (page, sel) => page.$$eval(sel, (els) => els.map((e) => e.textContent));

async function errorText(page) {
  if (await page.isHidden("#error")) return null;
  return page.textContent("#error");
}

test("a conversation: sign in, turns, context, reload, tabs, recall, new session", async () => {
  assert.notEqual(new URL(pageURL).origin, new URL(url).origin, "the page calls the API from another origin");
  const context = await newContext();
  const page = await open(context);
  const ada = randomUUID();
  await signIn(page, ada);
  assert.equal(await errorText(page), null);
  assert.equal(await page.textContent("#who"), ada);
  const first = await sessionId(page);
  assert.match(first, /^[0-9a-f-]{36}$/);
  assert.equal(await page.textContent("#session-status"), "(new)");

  // A turn round-trips: committed, then read back by get-context.
  await send(page, "My favourite colour is teal.", { remember: true });
  assert.deepEqual(await texts(page, "#messages li"), ["#1My favourite colour is teal.", "#2Echo: My favourite colour is teal."]);
  assert.deepEqual(await texts(page, "#ctx-window li"), ["userMy favourite colour is teal.", "assistantEcho: My favourite colour is teal."]);
  assert.match((await texts(page, "#ctx-memories li"))[0], /^My favourite colour is teal\./);
  assert.match(await page.textContent("#usage"), /^2 messages/);
  await send(page, "/set name Ada");
  await send(page, "/note Ada likes teal and cycling.");
  assert.deepEqual(JSON.parse(await page.textContent("#ctx-user-memory")), { name: { value: "Ada" } });
  assert.equal(await page.textContent("#ctx-notes"), "Ada likes teal and cycling.");
  await send(page, "I cycle to work every day.");
  assert.equal((await texts(page, "#messages li")).length, 4);

  // The id is remembered under the client's key; a reload resumes it, still active.
  assert.equal(await page.evaluate((k) => localStorage.getItem(k), `agentmem:session:${ada}:demo`), first);
  await page.reload();
  await idle(page);
  assert.equal(await sessionId(page), first);
  assert.equal(await page.textContent("#session-status"), "(remembered, still active)");
  assert.equal((await texts(page, "#messages li")).length, 4);

  // A second tab of the same user and agent shares the session.
  const tab2 = await open(context);
  assert.equal(await sessionId(tab2), first);
  assert.equal(await tab2.textContent("#who"), ada);

  // Recall finds the committed memory.
  await tab2.fill("#recall-query", "teal");
  await act(tab2, () => tab2.click("#recall"));
  assert.deepEqual(await texts(tab2, "#recall-results li .score").then((s) => s.length), 1);
  assert.match((await texts(tab2, "#recall-results li"))[0], /^My favourite colour is teal\./);

  if (screenshot) {
    await page.fill("#recall-query", "favourite colour");
    await act(page, () => page.click("#recall"));
    await page.screenshot({ path: screenshot, fullPage: true });
    assert.ok((await stat(screenshot)).size > 10000, "the screenshot has content");
  }

  // "New session" in one tab: the other tab follows it.
  await act(tab2, () => tab2.click("#new-session"));
  const second = await sessionId(tab2);
  assert.notEqual(second, first);
  assert.deepEqual(await texts(tab2, "#messages li"), []);
  await page.waitForFunction((id) => document.body.dataset.session === id, second);
  await idle(page);
  assert.equal(await page.textContent("#session-status"), "(changed in another tab)");
  assert.deepEqual(await texts(page, "#messages li"), []);
  // Long-term memory outlives the session.
  await page.fill("#recall-query", "teal");
  await act(page, () => page.click("#recall"));
  assert.match((await texts(page, "#recall-results li"))[0], /teal/);

  // Another user in the same browser gets a session of their own, and none of Ada's data.
  await page.click("#signout");
  const bob = randomUUID();
  await signIn(page, bob);
  assert.equal(await page.textContent("#who"), bob);
  const bobSession = await sessionId(page);
  assert.notEqual(bobSession, first);
  assert.notEqual(bobSession, second);
  assert.deepEqual(await texts(page, "#messages li"), []);
  assert.equal(await page.textContent("#ctx-user-memory"), "{}");
  // Ada again: her remembered session is resumed.
  await page.click("#signout");
  await signIn(page, ada);
  assert.equal(await sessionId(page), second);
  assert.equal(await page.textContent("#session-status"), "(remembered, still active)");

  assert.deepEqual([...page.problems, ...tab2.problems], []);
  await context.close();
});

test("two browsers of different users never see each other's data", async () => {
  const [ctxA, ctxB] = await Promise.all([newContext(), newContext()]);
  const [a, b] = await Promise.all([open(ctxA), open(ctxB)]);
  await signIn(a, randomUUID(), "private");
  await signIn(b, randomUUID(), "private");
  assert.notEqual(await sessionId(a), await sessionId(b));

  await send(a, "A's secret: the vault code is 4711.", { remember: true });
  await send(b, "B's secret: my passport is in the blue drawer.", { remember: true });

  for (const [page, mine, theirs] of [
    [a, "vault", "passport"],
    [b, "passport", "vault"],
  ]) {
    const shown = (await texts(page, "#messages li")).join("\n");
    assert.match(shown, new RegExp(mine));
    assert.doesNotMatch(shown, new RegExp(theirs));
    // Recall answers this user's own memories, best first, and never the other's.
    await page.fill("#recall-query", theirs);
    await act(page, () => page.click("#recall"));
    const found = (await texts(page, "#recall-results li")).join("\n");
    assert.doesNotMatch(found, new RegExp(theirs), `${theirs} leaked`);
    await page.fill("#recall-query", mine);
    await act(page, () => page.click("#recall"));
    assert.match((await texts(page, "#recall-results li"))[0], new RegExp(mine));
  }

  // B pastes A's session id nowhere: the only way in is A's token. B's storage never holds A's key.
  const keysB = await b.evaluate(() => Object.keys(localStorage).filter((k) => k.startsWith("agentmem:session:")));
  assert.equal(keysB.length, 1);
  assert.ok(keysB[0].endsWith(":private"));
  assert.ok(!keysB[0].includes(await a.textContent("#who")));
  await Promise.all([ctxA.close(), ctxB.close()]);
});

test("a 401 and a 400 are shown with their messages", async () => {
  const context = await newContext();
  const page = await open(context);

  // A pasted token the server refuses: 401, shown, and the page stays signed out.
  await page.click("#paste summary");
  await page.fill("#token", "not-a-token");
  await act(page, () => page.click("#signin-token"));
  const unauthorized = await errorText(page);
  assert.match(unauthorized, /^401 Unauthorized: \S.+/);
  assert.match(unauthorized, /request [0-9a-f-]{36}/);
  assert.equal(await page.getAttribute("#error", "data-code"), "unauthenticated");
  assert.equal(await page.isVisible("#signin"), true);
  assert.equal(await page.evaluate(() => localStorage.getItem("agentmem-demo:token")), null);

  // An agent name the API refuses: 400, with the field's message.
  await signIn(page, randomUUID(), "bad agent!");
  const invalid = await errorText(page);
  assert.match(invalid, /^400 Bad Request: /);
  assert.match(invalid, /agent: .+/);
  assert.equal(await page.getAttribute("#error", "data-code"), "invalid_request");

  // Then a valid sign-in clears the error.
  await signIn(page, randomUUID(), "demo");
  assert.equal(await errorText(page), null);
  assert.match(await sessionId(page), /^[0-9a-f-]{36}$/);
  assert.deepEqual(page.problems, []);
  await context.close();
});
