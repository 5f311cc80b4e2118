// `mcp-cassette/vitest`: useCassette with vitest's hooks (docs/adapters.md).

import { afterAll, afterEach, beforeAll, beforeEach, expect } from "vitest";

import { hooksOf, useCassetteWith } from "./adapter.js";

export {
  CassetteMismatchError,
  CassetteMissError,
  CassetteUnusedError,
  ReplayError,
  isMismatch,
} from "./errors.js";

const hooks = hooksOf({ beforeAll, beforeEach, afterEach, afterAll, expect });

/** Replays `file` around the enclosing describe block; see docs/adapters.md. */
export function useCassette(file, options) {
  return useCassetteWith(hooks, file, options);
}
