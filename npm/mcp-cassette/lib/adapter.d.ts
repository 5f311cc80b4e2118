export * from "./errors.js";

/** What `useCassette` accepts besides the cassette path. */
export interface UseCassetteOptions {
  /** "error" (default): a miss fails the test that caused it. "warn": the JSON-RPC error is the only signal. */
  onMiss?: "error" | "warn";
  /** Request fields that change every run, as `--volatile` takes them, added to the header's. */
  volatile?: string[];
  /** The redaction config the cassette was recorded with (`--redact-config`). */
  redactConfig?: string;
  /** Where an HTTP cassette is served; default "127.0.0.1:0" (a free port). */
  listen?: string;
  /** "none" (default) or "recorded": streamed answers spaced as recorded. */
  timing?: "none" | "recorded";
  /**
   * HTTP cassettes: fail the describe block's afterAll with `CassetteUnusedError` when a recorded
   * answer was never used by any of its tests. Default false.
   */
  failOnUnused?: boolean;
}

/** What the replay server of an HTTP cassette exposes. */
export interface ReplayServer {
  readonly url: string;
  readonly pid: number;
  /** Misses drained so far in this describe block. */
  misses(): number;
}

/** What `useCassette` returns. Which members work depends on the cassette's transport. */
export interface CassetteHandle {
  /** The cassette's absolute path. */
  readonly file: string;
  readonly transport: "http" | "stdio";
  /** HTTP cassettes: the replay server's base URL (inside a test or beforeEach only). */
  readonly url: string;
  /** HTTP cassettes: the running replay server. */
  readonly server: ReplayServer;
  /** stdio cassettes: the argv that replays the cassette, for the client under test to spawn. */
  readonly command: string[];
}

export interface Hooks {
  beforeAll(fn: () => Promise<void>, timeout?: number): void;
  beforeEach(fn: () => Promise<void>): void;
  afterEach(fn: () => Promise<void>): void;
  afterAll(fn: () => Promise<void>, timeout?: number): void;
  inTest(): boolean;
}

/** The shared implementation, for a framework whose hooks are given. */
export declare function useCassetteWith(hooks: Hooks, file: string, options?: UseCassetteOptions): CassetteHandle;

/** The hook table of a framework whose `expect` names the running test, as vitest's and jest's do. */
export declare function hooksOf(framework: {
  beforeAll: Hooks["beforeAll"];
  beforeEach: Hooks["beforeEach"];
  afterEach: Hooks["afterEach"];
  afterAll: Hooks["afterAll"];
  expect: { getState(): { currentTestName?: string } };
}): Hooks;
