/** ToolName names one of agentmem's memory tools. */
export type ToolName = "store_memory" | "recall_memory" | "search_knowledge_base" | "get_user_context" | "manage_long_term_memory" | "get_context" | "commit_turn" | "forget_memory" | "list_memories" | "search_history";
/** JsonObjectSchema is a JSON Schema of an object, as function calling takes it. */
export interface JsonObjectSchema {
    type: "object";
    properties: Record<string, unknown>;
    required?: string[];
    [key: string]: unknown;
}
/** ToolSpec is one tool: what a model is shown, and what it answers. */
export interface ToolSpec {
    name: ToolName;
    title: string;
    description: string;
    annotations: {
        readOnlyHint: boolean;
        destructiveHint: boolean;
        idempotentHint: boolean;
    };
    inputSchema: JsonObjectSchema;
    outputSchema: JsonObjectSchema;
}
/** TOOL_SPECS are the tools of the mcp function, in the same order. */
export declare const TOOL_SPECS: readonly ToolSpec[];
