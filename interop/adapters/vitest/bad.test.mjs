import { describe, expect, it, onTestFinished } from "vitest";
import * as adapter from "mcp-cassette/vitest";

import { bad } from "../suites.mjs";

bad({ describe, it, expect, onTestFinished, ...adapter });
