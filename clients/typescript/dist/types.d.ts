import type { components, paths } from "./generated/openapi.js";
/** Schemas are the API document's named schemas. */
export type Schemas = components["schemas"];
/** FunctionPath is the path of every function in the API document, e.g. `/v1/commit-turn`. */
export type FunctionPath = {
    [P in keyof paths]: paths[P] extends {
        post: unknown;
    } ? P : never;
}[keyof paths];
/** FunctionName is the name of a function of the API document, e.g. `commit-turn`. */
export type FunctionName = FunctionPath extends `/v1/${infer N}` ? N : never;
/** RequestBody is the JSON body function F takes. */
export type RequestBody<F extends FunctionName> = paths[`/v1/${F}`] extends {
    post: {
        requestBody?: {
            content: {
                "application/json": infer B;
            };
        };
    };
} ? B : never;
/** OpName is an `op` function F takes. */
export type OpName<F extends FunctionName> = RequestBody<F> extends infer B ? (B extends {
    op: infer O;
} ? O : never) : never;
/** OpBody is the body of op O of function F, without `op`. */
export type OpBody<F extends FunctionName, O extends OpName<F>> = RequestBody<F> extends infer B ? (B extends {
    op: infer BO;
} ? (O extends BO ? Omit<B, "op"> : never) : never) : never;
/** Agent names an agent: 1 to 64 characters of `A-Z a-z 0-9 _ . : -`. */
export type Agent = Schemas["Agent"];
export type ActiveSessionRequest = Schemas["ActiveSessionRequest"];
export type ActiveSession = Schemas["ActiveSession"];
export type CommitTurnRequest = Schemas["CommitTurnRequest"];
/**
 * MessageIn is one message of a turn; `content` is a string or content parts. `created_at`, for
 * service tokens importing a history, places the message in time (a user token gets 400).
 */
export type MessageIn = Schemas["MessageIn"];
/** MessageContent is a string, or an array of 1 to 100 content parts. */
export type MessageContent = Schemas["MessageContent"];
/** ContentPart is one part of a message's content, as the Chat Completions API takes it. */
export type ContentPart = Schemas["ContentPart"];
export type CommitResult = Schemas["CommitResult"];
export type ToolCall = Schemas["ToolCall"];
export type MemoryIn = Schemas["MemoryIn"];
export type Hit = Schemas["Hit"];
export type Usage = Schemas["Usage"];
export type RawMessage = Schemas["RawMessage"];
export type OpenAIMessage = Schemas["OpenAIMessage"];
/** LangChainStoredMessage is one message as LangChain stores it (format `langchain`). */
export type LangChainStoredMessage = Schemas["LangChainMessage"];
export type AnthropicMessage = Schemas["AnthropicMessage"];
export type Summary = Schemas["Summary"];
/** ContextFormat is get-context's `format`. */
export type ContextFormat = NonNullable<Schemas["GetContextRequest"]["format"]>;
export type GetContextRequest = Schemas["GetContextRequest"];
export type ContextRaw = Schemas["ContextRaw"];
export type ContextOpenAI = Schemas["ContextOpenAI"];
export type ContextLangChain = Schemas["ContextLangChain"];
export type ContextAnthropic = Schemas["ContextAnthropic"];
/** ContextFor is get-context's answer for a format. */
export type ContextFor<F extends ContextFormat | undefined> = F extends "openai" ? ContextOpenAI : F extends "langchain" ? ContextLangChain : F extends "anthropic" ? ContextAnthropic : ContextRaw;
export type RecallRequest = Schemas["RecallRequest"];
export type RecallResult = Schemas["RecallResult"];
/** RecallHit is one recall result: a memory, or a message with its session, seq and role. */
export type RecallHit = Schemas["RecallHit"];
export type SweepRequest = Schemas["SweepRequest"];
export type SweepResult = Schemas["SweepResult"];
export type UserMemoryItem = Schemas["UserMemoryItem"];
export type UserMemorySetResult = Schemas["UserMemorySetResult"];
export type UserMemoryList = Schemas["UserMemoryList"];
export type UserMemoryDeleted = Schemas["UserMemoryDeleted"];
export type UserState = Schemas["UserState"];
export type UserStateSetResult = Schemas["UserStateSetResult"];
export type NotesDocument = Schemas["NotesDocument"];
export type NotesCleared = Schemas["NotesCleared"];
export type SessionList = Schemas["SessionList"];
export type SessionSummary = Schemas["SessionSummary"];
/** HistoryMessage is a message of `sessions` history; `session_id` in the user's history across sessions. */
export type HistoryMessage = Schemas["HistoryMessage"];
export type SessionHistory = Schemas["SessionHistory"];
export type SessionsResetResult = Schemas["SessionsResetResult"];
export type Deleted = Schemas["Deleted"];
export type SessionTitle = Schemas["SessionTitle"];
export type SessionMetadata = Schemas["SessionMetadata"];
export type MemoryItem = Schemas["MemoryItem"];
export type MemoryList = Schemas["MemoryList"];
export type MemoriesCreateRequest = Omit<Schemas["MemoriesCreateRequest"], "op">;
export type MemoryCreated = Schemas["MemoryCreated"];
export type KnowledgeIngested = Schemas["KnowledgeIngested"];
export type KnowledgeSearchResult = Schemas["KnowledgeSearchResult"];
export type KnowledgeDeleted = Schemas["KnowledgeDeleted"];
export type ForgetUserRequest = Schemas["ForgetUserRequest"];
export type ForgetUserResult = Schemas["ForgetUserResult"];
export type IntentRequest = Schemas["IntentRequest"];
export type IntentResult = Schemas["IntentResult"];
export type Job = Schemas["Job"];
export type JobList = Schemas["JobList"];
export type JobsPurged = Schemas["JobsPurged"];
export type ProcessJobsRequest = Schemas["ProcessJobsRequest"];
export type ProcessJobsResult = Schemas["ProcessJobsResult"];
/** Event is what an adapter receives (the webhook adapter's body). */
export type Event = Schemas["Event"];
/** Scope names the user a service caller acts for (user callers may leave it out). */
export type Scope = {
    user_id?: string;
    tenant_id?: string;
};
