import { describe, expect, it } from "@jest/globals";
import * as adapter from "mcp-cassette/jest";

import { hit } from "../suites.mjs";

hit({ describe, it, expect, ...adapter });
