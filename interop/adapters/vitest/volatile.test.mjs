import { describe, expect, it, onTestFinished } from "vitest";
import * as adapter from "mcp-cassette/vitest";

import { volatile } from "../suites.mjs";

volatile({ describe, it, expect, onTestFinished, ...adapter });
