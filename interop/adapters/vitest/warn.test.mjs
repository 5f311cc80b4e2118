import { describe, expect, it, onTestFinished } from "vitest";
import * as adapter from "mcp-cassette/vitest";

import { warn } from "../suites.mjs";

warn({ describe, it, expect, onTestFinished, ...adapter });
