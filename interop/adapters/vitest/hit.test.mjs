import { describe, expect, it, onTestFinished } from "vitest";
import * as adapter from "mcp-cassette/vitest";

import { hit } from "../suites.mjs";

hit({ describe, it, expect, onTestFinished, ...adapter });
