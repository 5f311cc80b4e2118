import type { CassetteHandle, UseCassetteOptions } from "./adapter.js";

export type { CassetteHandle, ReplayServer, UseCassetteOptions } from "./adapter.js";
export type { DiffEntry, MissEvent, MissReason, UnusedRecording } from "./errors.js";
export { CassetteMismatchError, CassetteMissError, CassetteUnusedError, ReplayError, isMismatch } from "./errors.js";

/**
 * Replays `file` around the enclosing describe block: call it at describe scope. An HTTP cassette
 * is served on a free port (`.url`) and a miss fails the test that caused it; a stdio cassette
 * gives the argv to spawn (`.command`).
 */
export declare function useCassette(file: string, options?: UseCassetteOptions): CassetteHandle;
