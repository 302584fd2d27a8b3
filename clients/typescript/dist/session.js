import { isUUID } from "./transport.js";
/** MemoryStorage is a SessionStorage in memory: the default where there is no localStorage. */
export class MemoryStorage {
    #items = new Map();
    getItem(key) {
        return this.#items.get(key) ?? null;
    }
    setItem(key, value) {
        this.#items.set(key, String(value));
    }
    removeItem(key) {
        this.#items.delete(key);
    }
}
/** defaultStorage is the browser's localStorage when it can be used, else a MemoryStorage. */
export function defaultStorage() {
    try {
        const ls = globalThis.localStorage;
        if (ls) {
            const probe = "agentmem:probe";
            ls.setItem(probe, "1");
            ls.removeItem(probe);
            return ls;
        }
    }
    catch {
        // private mode, sandboxed iframe, Node's --localstorage-file missing: fall through
    }
    return new MemoryStorage();
}
/** sessionKey is the storage key of the remembered session of (user, agent). */
export function sessionKey(userId, agent) {
    return `agentmem:session:${userId}:${agent}`;
}
/** userIdFromToken reads `sub` from a JWT's payload (without verifying it: the server does). */
export function userIdFromToken(token) {
    if (!token)
        return undefined;
    const part = token.split(".")[1];
    if (!part)
        return undefined;
    try {
        const b64 = part.replace(/-/g, "+").replace(/_/g, "/").padEnd(Math.ceil(part.length / 4) * 4, "=");
        const bin = atob(b64);
        const bytes = Uint8Array.from(bin, (c) => c.charCodeAt(0));
        const claims = JSON.parse(new TextDecoder().decode(bytes));
        const sub = claims?.sub;
        return typeof sub === "string" && sub !== "" ? sub : undefined;
    }
    catch {
        return undefined;
    }
}
/** readRemembered reads a remembered id, ignoring anything that is not a UUID. */
export async function readRemembered(storage, key) {
    try {
        const v = await storage.getItem(key);
        return isUUID(v) ? v : undefined;
    }
    catch {
        return undefined;
    }
}
