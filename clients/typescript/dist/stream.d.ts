import type { CommitResult, MessageIn, ToolCall } from "./types.js";
type Obj = Record<string, unknown>;
/**
 * StreamAccumulator collects a model's streamed answer from the chunks of the OpenAI Chat
 * Completions stream, or the events of the Anthropic Messages and OpenAI Responses streams (the
 * SDKs' objects or their JSON): its text, its tool calls, the model and why it stopped.
 */
export declare class StreamAccumulator {
    #private;
    text: string;
    model: string | undefined;
    finishReason: string | undefined;
    usage: Obj | undefined;
    /** add reads one chunk or event and answers the text it added ("" when none). */
    add(chunk: unknown): string;
    /** toolCalls are the calls the model made, as commit-turn takes them. */
    get toolCalls(): ToolCall[];
    /** message is the assistant message of the whole answer, or undefined when the model said nothing. */
    message(metadata?: Record<string, unknown>): MessageIn | undefined;
}
/** StreamCommitOptions configure a StreamCommit. */
export interface StreamCommitOptions {
    /** Messages committed before the answer, in the same turn (the user's message, say). */
    before?: MessageIn[];
    /** Metadata merged into the assistant message's (model, finish_reason and usage are set). */
    metadata?: Record<string, unknown>;
    /** The commit's Idempotency-Key (default: a new one, reused by every retry). */
    idempotencyKey?: string;
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
export declare class StreamCommit<T> implements AsyncIterable<T> {
    #private;
    readonly accumulator: StreamAccumulator;
    readonly idempotencyKey: string;
    result: CommitResult | undefined;
    constructor(commit: (messages: MessageIn[], idempotencyKey: string) => Promise<CommitResult>, stream: AsyncIterable<T> | Iterable<T>, options?: StreamCommitOptions);
    /** text is the answer so far. */
    get text(): string;
    [Symbol.asyncIterator](): AsyncIterator<T>;
    /** texts iterates the stream and yields its text deltas (empty ones left out). */
    texts(): AsyncGenerator<string>;
    /** messages are what commit() stores: `before` and the assistant message. */
    messages(): MessageIn[];
    /** commit stores the turn now (iteration does at the stream's end); once only. */
    commit(): Promise<CommitResult | undefined>;
}
export {};
