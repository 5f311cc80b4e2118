import { describe, expect, it, onTestFinished } from "vitest";
import * as adapter from "mcp-cassette/vitest";

import { fails } from "../suites.mjs";

fails({ describe, it, expect, onTestFinished, ...adapter });
