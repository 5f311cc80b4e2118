import { describe, expect, it } from "@jest/globals";
import * as adapter from "mcp-cassette/jest";

import { fails } from "../suites.mjs";

fails({ describe, it, expect, ...adapter });
