import { describe, expect, it } from "@jest/globals";
import * as adapter from "mcp-cassette/jest";

import { missing } from "../suites.mjs";

missing({ describe, it, expect, ...adapter });
