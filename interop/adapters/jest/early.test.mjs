import { describe, expect, it } from "@jest/globals";
import * as adapter from "mcp-cassette/jest";

import { early } from "../suites.mjs";

early({ describe, it, expect, ...adapter });
