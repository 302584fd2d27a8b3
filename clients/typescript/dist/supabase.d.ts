import type { TokenGetter } from "./transport.js";
/** SupabaseSessionResult is the part of supabase-js's auth answers the token getter reads. */
type SupabaseSessionResult = {
    data: {
        session: {
            access_token: string;
        } | null;
    };
    error?: unknown;
};
/** SupabaseLike is the part of a supabase-js client (v2) that supabaseToken uses. */
export interface SupabaseLike {
    auth: {
        getSession(): Promise<SupabaseSessionResult>;
        refreshSession(): Promise<SupabaseSessionResult>;
    };
}
/**
 * supabaseToken is a TokenGetter over a supabase-js client: `auth.getSession()` before each
 * request (supabase-js refreshes an expired session there), and `auth.refreshSession()` once
 * after a 401. Signed out, it gives no token and the server answers 401.
 *
 *   const am = new AgentMemClient({ url, token: supabaseToken(supabase) })
 */
export declare function supabaseToken(supabase: SupabaseLike): TokenGetter;
export {};
