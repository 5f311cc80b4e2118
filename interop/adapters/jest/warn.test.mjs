import { describe, expect, it } from "@jest/globals";
import * as adapter from "mcp-cassette/jest";

import { warn } from "../suites.mjs";

warn({ describe, it, expect, ...adapter });
