import { describe, expect, it, onTestFinished } from "vitest";
import * as adapter from "mcp-cassette/vitest";

import { missing } from "../suites.mjs";

missing({ describe, it, expect, onTestFinished, ...adapter });
