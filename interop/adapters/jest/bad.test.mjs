import { describe, expect, it } from "@jest/globals";
import * as adapter from "mcp-cassette/jest";

import { bad } from "../suites.mjs";

bad({ describe, it, expect, ...adapter });
