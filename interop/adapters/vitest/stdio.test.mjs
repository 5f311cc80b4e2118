import { describe, expect, it, onTestFinished } from "vitest";
import * as adapter from "mcp-cassette/vitest";

import { stdio } from "../suites.mjs";

stdio({ describe, it, expect, onTestFinished, ...adapter });
