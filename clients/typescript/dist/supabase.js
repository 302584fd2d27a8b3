/**
 * supabaseToken is a TokenGetter over a supabase-js client: `auth.getSession()` before each
 * request (supabase-js refreshes an expired session there), and `auth.refreshSession()` once
 * after a 401. Signed out, it gives no token and the server answers 401.
 *
 *   const am = new AgentMemClient({ url, token: supabaseToken(supabase) })
 */
export function supabaseToken(supabase) {
    return async ({ refresh }) => {
        const { data } = refresh ? await supabase.auth.refreshSession() : await supabase.auth.getSession();
        return data?.session?.access_token ?? null;
    };
}
