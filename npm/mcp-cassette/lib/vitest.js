// `mcp-cassette/vitest`: useCassette with vitest's hooks (docs/adapters.md).

import { afterAll, afterEach, beforeAll, beforeEach, expect } from "vitest";

import { useCassetteWith } from "./adapter.js";

export {
  CassetteMismatchError,
  CassetteMissError,
  ReplayError,
  isMismatch,
} from "./errors.js";

const hooks = {
  beforeAll,
  beforeEach,
  afterEach,
  afterAll,
  // vitest names the running test in expect's state, and nothing at collection.
  inTest: () => expect.getState().currentTestName !== undefined,
};

/** Replays `file` around the enclosing describe block; see docs/adapters.md. */
export function useCassette(file, options) {
  return useCassetteWith(hooks, file, options);
}
