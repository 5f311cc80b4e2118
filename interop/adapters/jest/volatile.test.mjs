import { describe, expect, it } from "@jest/globals";
import * as adapter from "mcp-cassette/jest";

import { volatile } from "../suites.mjs";

volatile({ describe, it, expect, ...adapter });
