// Storing a streamed model answer as one assistant message when the stream ends: a chat server
// relays the model's deltas to its user as they come, and wants the whole answer in agentmem
// once it is complete, not one message per delta, nor a half answer when the stream breaks.
import { uuid } from "./transport.js";
const obj = (v) => (v !== null && typeof v === "object" ? v : undefined);
const str = (v) => (typeof v === "string" ? v : undefined);
/**
 * StreamAccumulator collects a model's streamed answer from the chunks of the OpenAI Chat
 * Completions stream, or the events of the Anthropic Messages and OpenAI Responses streams (the
 * SDKs' objects or their JSON): its text, its tool calls, the model and why it stopped.
 */
export class StreamAccumulator {
    text = "";
    model;
    finishReason;
    usage;
    #calls = new Map();
    #call(index) {
        let c = this.#calls.get(index);
        if (!c) {
            c = { id: "", name: "", arguments: "", input: undefined };
            this.#calls.set(index, c);
        }
        return c;
    }
    /** add reads one chunk or event and answers the text it added ("" when none). */
    add(chunk) {
        const c = obj(chunk);
        if (!c)
            return "";
        const type = str(c.type);
        if (type)
            return this.#event(type, c);
        this.model = str(c.model) ?? this.model;
        if (obj(c.usage))
            this.usage = obj(c.usage);
        let added = "";
        for (const choice of Array.isArray(c.choices) ? c.choices : []) {
            const ch = obj(choice);
            if (!ch || (typeof ch.index === "number" && ch.index !== 0))
                continue;
            const delta = obj(ch.delta);
            added += str(delta?.content) ?? "";
            for (const tc of Array.isArray(delta?.tool_calls) ? delta.tool_calls : []) {
                const t = obj(tc) ?? {};
                const call = this.#call(typeof t.index === "number" ? t.index : 0);
                call.id = str(t.id) || call.id;
                const fn = obj(t.function);
                call.name = str(fn?.name) || call.name;
                call.arguments += str(fn?.arguments) ?? "";
            }
            this.finishReason = str(ch.finish_reason) ?? this.finishReason;
        }
        this.text += added;
        return added;
    }
    #event(type, e) {
        const index = typeof e.index === "number" ? e.index : 0;
        switch (type) {
            case "message_start": {
                const m = obj(e.message);
                this.model = str(m?.model) ?? this.model;
                if (obj(m?.usage))
                    this.usage = obj(m?.usage);
                return "";
            }
            case "content_block_start": {
                const b = obj(e.content_block);
                if (b?.type === "tool_use") {
                    const call = this.#call(index);
                    call.id = str(b.id) ?? "";
                    call.name = str(b.name) ?? "";
                    call.input = b.input;
                }
                else if (b?.type === "text" && str(b.text)) {
                    this.text += b.text;
                    return b.text;
                }
                return "";
            }
            case "content_block_delta": {
                const d = obj(e.delta);
                if (d?.type === "text_delta") {
                    const t = str(d.text) ?? "";
                    this.text += t;
                    return t;
                }
                if (d?.type === "input_json_delta")
                    this.#call(index).arguments += str(d.partial_json) ?? "";
                return "";
            }
            case "message_delta": {
                this.finishReason = str(obj(e.delta)?.stop_reason) ?? this.finishReason;
                if (obj(e.usage))
                    this.usage = { ...(this.usage ?? {}), ...obj(e.usage) };
                return "";
            }
            case "response.output_text.delta": {
                const t = str(e.delta) ?? "";
                this.text += t;
                return t;
            }
            case "response.completed": {
                const r = obj(e.response);
                this.model = str(r?.model) ?? this.model;
                this.finishReason = str(r?.status) ?? this.finishReason;
                return "";
            }
            default:
                return "";
        }
    }
    /** toolCalls are the calls the model made, as commit-turn takes them. */
    get toolCalls() {
        return [...this.#calls.entries()].map(([i, c]) => ({
            id: c.id || `call_${i}`,
            type: "function",
            function: { name: c.name, arguments: c.arguments || (c.input !== undefined ? JSON.stringify(c.input) : "{}") },
        }));
    }
    /** message is the assistant message of the whole answer, or undefined when the model said nothing. */
    message(metadata = {}) {
        const calls = this.toolCalls;
        if (this.text === "" && calls.length === 0)
            return undefined;
        const m = { role: "assistant", content: this.text };
        if (calls.length > 0)
            m.tool_calls = calls;
        const meta = {};
        if (this.model)
            meta.model = this.model;
        if (this.finishReason)
            meta.finish_reason = this.finishReason;
        if (this.usage)
            meta.usage = this.usage;
        Object.assign(meta, metadata);
        if (Object.keys(meta).length > 0)
            m.metadata = meta;
        return m;
    }
}
/**
 * StreamCommit passes a model's stream through unchanged and, when it is exhausted, commits the
 * `before` messages and the whole answer as one turn, with one Idempotency-Key. A stream that
 * throws, or is left before its end, commits nothing. `texts()` yields the text deltas instead
 * of the chunks; `result` is then commit-turn's answer.
 *
 *   const reply = chat.stream(await openai.chat.completions.create({ ..., stream: true }),
 *                             { before: [{ role: "user", content: question }] });
 *   for await (const text of reply.texts()) res.write(text);
 */
export class StreamCommit {
    accumulator = new StreamAccumulator();
    idempotencyKey;
    result;
    #commit;
    #stream;
    #options;
    #started = false;
    #last = "";
    constructor(commit, stream, options = {}) {
        this.#commit = commit;
        this.#stream = stream;
        this.#options = options;
        this.idempotencyKey = options.idempotencyKey ?? uuid();
    }
    /** text is the answer so far. */
    get text() {
        return this.accumulator.text;
    }
    async *[Symbol.asyncIterator]() {
        if (this.#started)
            throw new Error("agentmem: a StreamCommit can be iterated once");
        this.#started = true;
        for await (const chunk of this.#stream) {
            this.#last = this.accumulator.add(chunk);
            yield chunk;
        }
        await this.commit();
    }
    /** texts iterates the stream and yields its text deltas (empty ones left out). */
    async *texts() {
        for await (const _ of this) {
            if (this.#last)
                yield this.#last;
        }
    }
    /** messages are what commit() stores: `before` and the assistant message. */
    messages() {
        const out = [...(this.#options.before ?? [])];
        const m = this.accumulator.message(this.#options.metadata);
        if (m)
            out.push(m);
        return out;
    }
    /** commit stores the turn now (iteration does at the stream's end); once only. */
    async commit() {
        if (this.result)
            return this.result;
        const msgs = this.messages();
        if (msgs.length === 0)
            return undefined;
        this.result = await this.#commit(msgs, this.idempotencyKey);
        return this.result;
    }
}
