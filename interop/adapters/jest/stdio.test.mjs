import { describe, expect, it } from "@jest/globals";
import * as adapter from "mcp-cassette/jest";

import { stdio } from "../suites.mjs";

stdio({ describe, it, expect, ...adapter });
