// `mcp-cassette/jest`: useCassette with the hooks from @jest/globals (docs/adapters.md). jest
// must run in its native ESM mode (NODE_OPTIONS=--experimental-vm-modules, transform {}).

import { afterAll, afterEach, beforeAll, beforeEach, expect } from "@jest/globals";

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
