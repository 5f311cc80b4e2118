import { describe, expect, it, onTestFinished } from "vitest";
import * as adapter from "mcp-cassette/vitest";

import { early } from "../suites.mjs";

early({ describe, it, expect, onTestFinished, ...adapter });
