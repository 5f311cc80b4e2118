// The adapter specs, written once and run by both vitest and jest: each file under vitest/ and
// jest/ imports its framework's globals and adapter entry point and hands them to one suite here.
// tests/it/adapters.rs runs both frameworks and checks every test's verdict by name.
import { resolve } from "node:path";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const ECHO = "cassettes/echo.http.jsonl";

const call = (id, name, args) => ({ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args } });
const post = async (url, body) => {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: JSON.stringify(body),
  });
  return res.json();
};

/** What a suite is handed: the framework's globals and the adapter entry point's exports. */
// t = { describe, it, expect, onTestFinished?, useCassette, ReplayError, CassetteMissError,
//       CassetteMismatchError, isMismatch }

export function hit(t) {
  const { describe, it, expect, useCassette } = t;
  describe("an http cassette", () => {
    const tape = useCassette(ECHO);
    let early;
    try {
      void tape.url;
    } catch (err) {
      early = err.message;
    }

    it("answers a recorded call over fetch", async () => {
      const answer = await post(tape.url, call(7, "echo", { m: "recorded" }));
      expect(answer).toEqual({ jsonrpc: "2.0", id: 7, result: { content: [{ type: "text", text: "recorded" }] } });
    });

    it("has no url at describe scope", () => {
      expect(early).toMatch(/the replay server for cassettes\/echo\.http\.jsonl is not running yet/);
    });

    it("has no command", () => {
      expect(() => tape.command).toThrow(/is an http cassette; connect to \.url instead of spawning \.command/);
    });
  });

  describe("the SDK client over http", () => {
    const tape = useCassette("cassettes/session.http.jsonl");

    it("gets the recorded session", async () => {
      const client = new Client({ name: "adapter-spec", version: "1.0.0" });
      await client.connect(new StreamableHTTPClientTransport(new URL(tape.url)));
      try {
        const tools = await client.listTools();
        expect(tools.tools.map((tool) => tool.name)).toEqual(["echo"]);
        const result = await client.callTool({ name: "echo", arguments: { m: "recorded" } });
        expect(result.content).toEqual([{ type: "text", text: "recorded" }]);
      } finally {
        await client.close();
      }
    });
  });
}

export function fails(t) {
  const { describe, it, expect, onTestFinished, useCassette } = t;
  describe("misses", () => {
    const tape = useCassette(ECHO);
    let seen;

    it("fails on drifted arguments", async () => {
      // vitest hands the error the adapter threw to this callback; a later test reads it.
      onTestFinished?.(({ task }) => {
        seen = task.result?.errors?.[0];
      });
      await post(tape.url, call(2, "echo", { m: "drifted" }));
      // No assertion: the adapter fails this test after it.
    });

    it("passes between two misses", async () => {
      const answer = await post(tape.url, call(3, "echo", { m: "recorded" }));
      expect(answer.result.content[0].text).toBe("recorded");
    });

    it("fails on an unknown tool", async () => {
      const answer = await post(tape.url, call(4, "nope", {}));
      expect(answer.error.code).toBe(-32601);
    });

    it("counts further misses", async () => {
      await post(tape.url, call(5, "nope", {}));
      await post(tape.url, call(6, "echo", { m: "again" }));
    });

    it("exposes the changes of a mismatch", () => {
      if (!onTestFinished) return; // jest: the reporter's failureDetails carry them instead
      expect(seen?.name).toBe("CassetteMismatchError");
      expect(seen?.changes).toEqual([{ path: "/m", recorded: "recorded", live: "drifted" }]);
      expect(seen?.reason?.kind).toBe("arguments-differ");
      expect(seen?.misses?.length).toBe(1);
    });
  });
}

export function warn(t) {
  const { describe, it, expect, useCassette } = t;
  describe("onMiss warn", () => {
    const tape = useCassette(ECHO, { onMiss: "warn" });

    it("leaves the JSON-RPC error as the only signal", async () => {
      const answer = await post(tape.url, call(1, "echo", { m: "drifted" }));
      expect(answer.error.code).toBe(-32601);
    });

    it("still answers recorded calls", async () => {
      const answer = await post(tape.url, call(2, "echo", { m: "recorded" }));
      expect(answer.result.content[0].text).toBe("recorded");
    });
  });
}

const stamp = (id) =>
  call(id, "stamp", { m: "hi", requestedAt: new Date().toISOString(), runId: `run-${Math.random()}` });

export function volatile(t) {
  const { describe, it, expect, useCassette } = t;
  describe("volatile declared", () => {
    const tape = useCassette(ECHO, { volatile: ["tools/call:/arguments/runId"] });

    it("matches a call whose declared fields changed", async () => {
      const answer = await post(tape.url, stamp(1));
      expect(answer.result.content[0].text).toBe("stamped");
    });
  });

  describe("volatile not declared", () => {
    const tape = useCassette(ECHO);

    it("misses on the undeclared field", async () => {
      await post(tape.url, stamp(1));
    });
  });

  describe("volatile malformed", () => {
    let refused;
    try {
      useCassette(ECHO, { volatile: ["arguments/runId"] });
    } catch (err) {
      refused = err;
    }

    it("is refused at collection", () => {
      expect(refused?.message).toMatch(/neither a JSON Pointer nor a method-scoped one: "arguments\/runId"/);
    });
  });
}

export function stdio(t) {
  const { describe, it, expect, useCassette } = t;
  redacting(t);
  describe("a stdio cassette", () => {
    const tape = useCassette("cassettes/session.stdio.jsonl", { volatile: ["/arguments/runId"] });

    it("hands back the command", () => {
      expect(tape.command.slice(1)).toEqual([
        "replay",
        resolve("cassettes/session.stdio.jsonl"),
        "--volatile",
        "/arguments/runId",
      ]);
    });

    it("is spawned by the SDK client", async () => {
      const [command, ...args] = tape.command;
      const client = new Client({ name: "adapter-spec", version: "1.0.0" });
      await client.connect(new StdioClientTransport({ command, args, stderr: "ignore" }));
      try {
        const result = await client.callTool({ name: "echo", arguments: { m: "recorded" } });
        expect(result.content).toEqual([{ type: "text", text: "recorded" }]);
      } finally {
        await client.close();
      }
    });

    it("has no url and no server", () => {
      expect(() => tape.url).toThrow(/is a stdio cassette; spawn \.command instead of connecting to \.url/);
      expect(() => tape.server).toThrow(/is a stdio cassette/);
    });
  });
}

export function redacting(t) {
  const { describe, it, expect, useCassette } = t;
  describe("a stdio cassette with a redaction config", () => {
    const tape = useCassette("cassettes/session.stdio.jsonl", {
      volatile: ["/arguments/runId"],
      redactConfig: "cassettes/redact.json",
    });

    it("passes the config on after the declarations", () => {
      expect(tape.command.slice(3)).toEqual([
        "--volatile",
        "/arguments/runId",
        "--redact-config",
        resolve("cassettes/redact.json"),
      ]);
    });
  });
}

export function bad(t) {
  const { describe, it, expect, useCassette } = t;
  describe("bad input", () => {
    let broken;
    try {
      useCassette("cassettes/broken.jsonl");
    } catch (err) {
      broken = err;
    }

    it("names a file that is not a cassette", () => {
      expect(broken?.message).toMatch(/cassettes\/broken\.jsonl is not a cassette/);
    });

    it("refuses useCassette inside a test", () => {
      expect(() => useCassette(ECHO)).toThrow(/was called inside a test/);
    });

    it("exports one set of error classes", () => {
      expect(new t.CassetteMismatchError("m", [])).toBeInstanceOf(t.ReplayError);
      expect(new t.CassetteMissError("m", [])).toBeInstanceOf(t.ReplayError);
      expect(t.isMismatch({ kind: "params-differ", changes: [] })).toBe(true);
      expect(t.isMismatch({ kind: "unknown-tool" })).toBe(false);
    });
  });
}

export function missing(t) {
  const { describe, it, useCassette } = t;
  describe("a missing cassette", () => {
    useCassette("cassettes/no-such.http.jsonl");
    it("never runs", () => {});
  });
}

export function early(t) {
  const { describe, it, useCassette } = t;
  describe("a binary that exits early", () => {
    // Not an address: the binary refuses it and exits before printing a URL.
    useCassette(ECHO, { listen: "not-an-address" });
    it("fails with its stderr", () => {});
  });
}
