// A TypeScript SDK client that answers the server's own requests: sampling, elicitation and
// roots. Used to replay a cassette holding such requests (docs/replay.md, "Requests from the
// server").
//
// usage: node ts-asks.mjs <answers> -- <server command...>
//        node ts-asks.mjs <answers> -- <http(s) URL>   (Streamable HTTP)
//   answers: same | different | none (declares no capability)
// Prints what it saw as JSON: the steps, and the server requests it answered.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";

const args = process.argv.slice(2);
const sep = args.indexOf("--");
const answers = args[0];
const [command, ...commandArgs] = args.slice(sep + 1);
const text = answers === "same" ? "a recorded answer" : "a different answer";

const capabilities = answers === "none"
  ? {}
  : { sampling: {}, elicitation: { form: {} }, roots: { listChanged: true } };
const client = new Client({ name: "interop-ts", version: "1.0.0" }, { capabilities });
const asked = [];
if (answers !== "none") {
  client.setRequestHandler(CreateMessageRequestSchema, async () => {
    asked.push("sampling/createMessage");
    return {
      role: "assistant",
      content: { type: "text", text },
      model: "test-model",
      stopReason: "endTurn",
    };
  });
  client.setRequestHandler(ElicitRequestSchema, async () => {
    asked.push("elicitation/create");
    return { action: "accept", content: { name: text, check: true } };
  });
  client.setRequestHandler(ListRootsRequestSchema, async () => {
    asked.push("roots/list");
    return { roots: [{ uri: "file:///tmp/project", name: text }] };
  });
}

const http = /^https?:\/\//.test(command) && commandArgs.length === 0;
const transport = http
  ? new StreamableHTTPClientTransport(new URL(command))
  : new StdioClientTransport({ command, args: commandArgs, stderr: "inherit" });
await client.connect(transport);
const out = { steps: [] };
const step = async (name, fn) => {
  try {
    out.steps.push({ name, result: await fn() });
  } catch (e) {
    out.steps.push({ name, error: String(e.message ?? e) });
  }
};
await step("sampling", () =>
  client.callTool({ name: "trigger-sampling-request", arguments: { prompt: "hi", maxTokens: 5 } }));
await step("elicitation", () => client.callTool({ name: "trigger-elicitation-request", arguments: {} }));
await step("echo", () => client.callTool({ name: "echo", arguments: { message: "after the asks" } }));
out.asked = asked;
await client.close();
console.log(JSON.stringify(out));
