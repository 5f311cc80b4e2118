// A scripted MCP client built on the official TypeScript SDK. It drives one fixed scenario
// against whatever stdio server command it is given and prints what it saw as JSON, so a test
// can compare a direct session with one through `mcp-cassette record` or against a replay.
//
// usage: node ts-client.mjs <scenario> -- <server command...>
//        node ts-client.mjs <scenario> -- <http(s) URL>     (Streamable HTTP)
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  LoggingMessageNotificationSchema,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";

const args = process.argv.slice(2);
const sep = args.indexOf("--");
const scenario = args[0];
const [command, ...commandArgs] = args.slice(sep + 1);

const transport = /^https?:\/\//.test(command) && commandArgs.length === 0
  ? new StreamableHTTPClientTransport(new URL(command))
  : new StdioClientTransport({ command, args: commandArgs, stderr: "inherit" });
const client = new Client({ name: "interop-ts", version: "1.0.0" });
const seen = { notifications: [] };
client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
  seen.notifications.push({ method: n.method, level: n.params.level });
});
client.setNotificationHandler(ToolListChangedNotificationSchema, (n) => {
  seen.notifications.push({ method: n.method });
});

await client.connect(transport);
const out = { server: client.getServerVersion(), steps: [] };
const step = async (name, fn) => {
  try {
    out.steps.push({ name, result: await fn() });
  } catch (e) {
    out.steps.push({ name, error: String(e.message ?? e) });
  }
};

if (scenario === "everything" || scenario === "everything-shifted") {
  // "everything-shifted" sends one ping first, so every later request id (and the progress
  // token the SDK derives from it) differs from a recording of "everything".
  if (scenario === "everything-shifted") await client.ping();
  const progress = [];
  await step("tools/list", async () => (await client.listTools()).tools.map((t) => t.name).sort());
  await step("echo", () => client.callTool({ name: "echo", arguments: { message: "hello from ts" } }));
  await step("echo-again", () => client.callTool({ name: "echo", arguments: { message: "hello from ts" } }));
  await step("sum", () => client.callTool({ name: "get-sum", arguments: { a: 2, b: 40 } }));
  await step("progress", () =>
    client.callTool(
      { name: "trigger-long-running-operation", arguments: { duration: 1, steps: 3 } },
      undefined,
      { onprogress: (p) => progress.push(p.progress) },
    ),
  );
  out.progress = progress;
  await step("resources/list", async () => (await client.listResources()).resources.slice(0, 3).map((r) => r.uri));
  await step("prompts/list", async () => (await client.listPrompts()).prompts.map((p) => p.name).sort());
  await step("prompt", () => client.getPrompt({ name: "simple-prompt", arguments: {} }));
  await step("unknown-tool", () => client.callTool({ name: "no-such-tool", arguments: {} }));
  await step("ping", () => client.ping());
} else if (scenario === "tiny") {
  await step("tools/list", async () => (await client.listTools()).tools.map((t) => t.name).sort());
  await step("echo", () => client.callTool({ name: "echo", arguments: { message: "hi" } }));
  await step("add", () => client.callTool({ name: "add", arguments: { a: 2, b: 3 } }));
  await step("ping", () => client.ping());
} else {
  console.error(`unknown scenario ${scenario}`);
  process.exit(2);
}
out.notifications = seen.notifications;
await client.close();
console.log(JSON.stringify(out, null, 2));
