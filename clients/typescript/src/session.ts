import { isUUID } from "./transport.js";

/**
 * SessionStorage keeps the remembered session ids: the Web Storage API's shape (localStorage,
 * sessionStorage), or anything with the same three methods, synchronous or not.
 */
export interface SessionStorage {
  getItem(key: string): string | null | undefined | Promise<string | null | undefined>;
  setItem(key: string, value: string): void | Promise<void>;
  removeItem(key: string): void | Promise<void>;
}

/** MemoryStorage is a SessionStorage in memory: the default where there is no localStorage. */
export class MemoryStorage implements SessionStorage {
  #items = new Map<string, string>();
  getItem(key: string): string | null {
    return this.#items.get(key) ?? null;
  }
  setItem(key: string, value: string): void {
    this.#items.set(key, String(value));
  }
  removeItem(key: string): void {
    this.#items.delete(key);
  }
}

/** defaultStorage is the browser's localStorage when it can be used, else a MemoryStorage. */
export function defaultStorage(): SessionStorage {
  try {
    const ls = (globalThis as { localStorage?: Storage }).localStorage;
    if (ls) {
      const probe = "agentmem:probe";
      ls.setItem(probe, "1");
      ls.removeItem(probe);
      return ls;
    }
  } catch {
    // private mode, sandboxed iframe, Node's --localstorage-file missing: fall through
  }
  return new MemoryStorage();
}

/** sessionKey is the storage key of the remembered session of (user, agent). */
export function sessionKey(userId: string, agent: string): string {
  return `agentmem:session:${userId}:${agent}`;
}

/** userIdFromToken reads `sub` from a JWT's payload (without verifying it: the server does). */
export function userIdFromToken(token: string | null | undefined): string | undefined {
  if (!token) return undefined;
  const part = token.split(".")[1];
  if (!part) return undefined;
  try {
    const b64 = part.replace(/-/g, "+").replace(/_/g, "/").padEnd(Math.ceil(part.length / 4) * 4, "=");
    const bin = atob(b64);
    const bytes = Uint8Array.from(bin, (c) => c.charCodeAt(0));
    const claims: unknown = JSON.parse(new TextDecoder().decode(bytes));
    const sub = (claims as { sub?: unknown })?.sub;
    return typeof sub === "string" && sub !== "" ? sub : undefined;
  } catch {
    return undefined;
  }
}

/** readRemembered reads a remembered id, ignoring anything that is not a UUID. */
export async function readRemembered(storage: SessionStorage, key: string): Promise<string | undefined> {
  try {
    const v = await storage.getItem(key);
    return isUUID(v) ? v : undefined;
  } catch {
    return undefined;
  }
}
