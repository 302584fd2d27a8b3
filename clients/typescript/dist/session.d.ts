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
export declare class MemoryStorage implements SessionStorage {
    #private;
    getItem(key: string): string | null;
    setItem(key: string, value: string): void;
    removeItem(key: string): void;
}
/** defaultStorage is the browser's localStorage when it can be used, else a MemoryStorage. */
export declare function defaultStorage(): SessionStorage;
/** sessionKey is the storage key of the remembered session of (user, agent). */
export declare function sessionKey(userId: string, agent: string): string;
/** userIdFromToken reads `sub` from a JWT's payload (without verifying it: the server does). */
export declare function userIdFromToken(token: string | null | undefined): string | undefined;
/** readRemembered reads a remembered id, ignoring anything that is not a UUID. */
export declare function readRemembered(storage: SessionStorage, key: string): Promise<string | undefined>;
