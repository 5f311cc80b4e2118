// Compiles JSON Schemas with real Ajv, set up as the reference compiles a tool's inputSchema for
// CAS-C005, and prints one verdict per schema: the other side of tests/it/ajv.rs.
//
// stdin: a JSON array of schemas, or JSON Lines (one schema per line).
// stdout: one JSON line per schema, in order: {"ok":true} or {"ok":false,"error":"<message>"}.
// stderr: Ajv's own warnings (unknown formats and the like), which are not verdicts.
//
// Options and class choice are the reference's: draft-07 Ajv when `$schema` is a string holding
// "draft-07", otherwise Ajv2020; `strict: false, allErrors: true, validateFormats: true`, plus
// ajv-formats. A schema compiles when `compile` does not throw.
import { readFileSync } from "node:fs";
import Ajv from "ajv";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";

const options = { strict: false, allErrors: true, validateFormats: true };

// One instance per class, emptied after every schema: a fresh instance each time costs
// milliseconds (meta-schemas, formats), which over thousands of schemas is most of a minute.
// `removeSchema()` drops every schema, reference and cache entry except the meta-schemas, so
// no verdict depends on an earlier schema (two schemas with one `$id` would otherwise collide).
const draft07 = new Ajv(options);
const draft2020 = new Ajv2020(options);
addFormats(draft07);
addFormats(draft2020);

function compilerFor(schema) {
  const declared = schema !== null && typeof schema === "object" ? schema.$schema : undefined;
  return typeof declared === "string" && declared.includes("draft-07") ? draft07 : draft2020;
}

function verdict(schema) {
  const ajv = compilerFor(schema);
  try {
    ajv.compile(schema);
    return { ok: true };
  } catch (error) {
    return { ok: false, error: String(error?.message ?? error) };
  } finally {
    ajv.removeSchema();
  }
}

function schemas(text) {
  const trimmed = text.trimStart();
  if (trimmed.startsWith("[")) {
    return JSON.parse(trimmed);
  }
  return text
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line));
}

const lines = schemas(readFileSync(0, "utf8")).map((schema) => JSON.stringify(verdict(schema)));
process.stdout.write(lines.length > 0 ? `${lines.join("\n")}\n` : "");
