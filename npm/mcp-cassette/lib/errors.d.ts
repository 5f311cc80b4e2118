/** One entry of a structural diff: where a value differs, and its two sides. */
export interface DiffEntry {
  /** JSON Pointer to the differing value; `""` is the whole value. */
  path: string;
  /** The recorded side; absent when the member is missing there. */
  recorded?: unknown;
  /** The side the test sent; absent when the member is missing there. */
  live?: unknown;
}

/** Why a request found no recorded answer; `kind` names the case. */
export type MissReason =
  | { kind: "empty-cassette" }
  | { kind: "exhausted" | "stream-exhausted" | "subscription-exhausted"; recorded: number }
  | { kind: "task-not-terminal"; taskId: string; status: string; polls: number }
  | { kind: "recorded-unanswered"; method: string; exact: boolean }
  | { kind: "unknown-method"; method: string; recorded: string[] }
  | { kind: "unknown-tool"; tool: string; recorded: string[] }
  | { kind: "arguments-differ" | "params-differ"; changes: DiffEntry[] };

/** One miss as the replay server logged it (docs/adapters.md, "The miss channel"). */
export interface MissEvent {
  /** The client session's label (1, 2, 3… in the order sessions started). */
  session: number;
  /** The minted `mcp-session-id`, when the recording's server minted them. */
  sessionId: string | null;
  /** The request's JSON-RPC id. */
  id: string | number | null;
  method: string;
  /** The tool a `tools/call` named. */
  tool: string | null;
  /** What the client got: the miss error, a borrowed answer, or the live server's. */
  handling: "error" | "borrowed" | "forwarded";
  reason: MissReason;
  /** The diagnosis sentence the replay printed (redacted). */
  diagnosis: string;
}

/** True for `arguments-differ` and `params-differ`: a recording matched and diverged. */
export declare function isMismatch(reason: MissReason | undefined | null): boolean;

/** What every adapter error shares. */
export declare class ReplayError extends Error {
  constructor(message: string, misses: MissEvent[]);
  /** Every miss of the test, oldest first. */
  readonly misses: MissEvent[];
  /** The first miss's reason. */
  readonly reason: MissReason;
}

/** Nothing in the cassette answered the request. */
export declare class CassetteMissError extends ReplayError {
  name: "CassetteMissError";
}

/** A recording matched method and tool, and diverged where `.changes` says. */
export declare class CassetteMismatchError extends ReplayError {
  name: "CassetteMismatchError";
  readonly changes: DiffEntry[];
}

/** The error for one test's misses (the first picks the class), or undefined for none. */
export declare function missesToError(misses: MissEvent[]): ReplayError | undefined;

/** A recording nothing used (docs/replay.md, "Unused recordings"). */
export interface UnusedRecording {
  /** The cassette line of the recorded request. */
  line: number;
  method: string;
  /** The tool a `tools/call` named. */
  tool: string | null;
}

/** `failOnUnused`: the describe block left recordings unused; `.unused` lists them. */
export declare class CassetteUnusedError extends Error {
  constructor(message: string, unused: UnusedRecording[]);
  name: "CassetteUnusedError";
  readonly unused: UnusedRecording[];
}

/** The error for a block's unused recordings, or undefined when every one was used. */
export declare function unusedToError(unused: UnusedRecording[], cassette: string): CassetteUnusedError | undefined;
