// failOnUnused (docs/adapters.md): a block that leaves a recording unused fails in its afterAll
// with CassetteUnusedError; a block that uses every recording passes. Run on its own by
// tests/it/adapters.rs (vitest-unused.config.mjs), apart from the specs both frameworks share.
import { describe, expect, it } from "vitest";
import { CassetteUnusedError, useCassette } from "mcp-cassette/vitest";

const call = (id, name, args) => ({ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args } });
const post = async (url, body) => {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: JSON.stringify(body),
  });
  return res.json();
};

describe("every recording used", () => {
  const tape = useCassette("cassettes/echo.http.jsonl", { failOnUnused: true });

  it("calls each recorded request", async () => {
    expect((await post(tape.url, call(1, "echo", { m: "recorded" }))).result).toBeDefined();
    // requestedAt is declared volatile by the cassette's header.
    const stamp = { m: "hi", requestedAt: new Date().toISOString(), runId: "run-1" };
    expect((await post(tape.url, call(2, "stamp", stamp))).result).toBeDefined();
  });
});

describe("a recording left unused", () => {
  useCassette("cassettes/echo.http.jsonl", { failOnUnused: true });

  it("calls nothing", () => {
    expect(CassetteUnusedError.name).toBe("CassetteUnusedError");
  });
});
