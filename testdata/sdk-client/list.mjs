// A real MCP client listing a server's whole surface: the official TypeScript SDK, pinned by
// package-lock.json.
//
//   node list.mjs COMMAND [ARGS...]
//
// Starts COMMAND as a stdio MCP server (directly, or mcppin-guard in front of one), lists its
// tools, prompts and resource templates (each list only when the server declares its
// capability) and prints one JSON line: the server's name, each list as sorted names or keys,
// or the error the SDK raised for it. The Python SDK's `testdata/realservers/python/list.py`
// prints the same line, so the two clients, direct and guarded, can be compared as text.
//
// A server may register items after initialize and announce them with a
// `notifications/*/list_changed` (server-everything does). So the lists are read again until
// two readings in a row agree and no list_changed arrived since the first of them began; that
// reading is printed. A surface that has not settled after READINGS readings is never reduced
// to one of them: the line then holds `unsettled` with every reading, and the caller fails on it.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import {
  PromptListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";

const READINGS = 5;
const [command, ...args] = process.argv.slice(2);
const failure = (e) => ({ error: { code: e?.code ?? null, message: String(e?.message ?? e) } });
const summary = {};
const client = new Client({ name: "mcppin-sdk-client", version: "1.0.0" }, { capabilities: {} });
let changes = 0;
for (const schema of [
  ToolListChangedNotificationSchema,
  PromptListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
]) {
  client.setNotificationHandler(schema, () => {
    changes += 1;
  });
}
const transport = new StdioClientTransport({ command, args, env: process.env, stderr: "pipe" });
transport.stderr?.on("data", () => {});
try {
  await client.connect(transport);
  summary.server = client.getServerVersion()?.name ?? null;
  const offered = client.getServerCapabilities() ?? {};
  const list = async (capability, read, pick) => {
    if (!offered[capability]) return null;
    try {
      return pick(await read()).sort();
    } catch (e) {
      return failure(e);
    }
  };
  const reading = async () => ({
    tools: await list("tools", () => client.listTools(), (r) => r.tools.map((t) => t.name)),
    prompts: await list("prompts", () => client.listPrompts(), (r) => r.prompts.map((p) => p.name)),
    resource_templates: await list(
      "resources",
      () => client.listResourceTemplates(),
      (r) => r.resourceTemplates.map((t) => t.uriTemplate),
    ),
  });
  // Each reading with the count of list_changed seen before it began.
  const readings = [[changes, await reading()]];
  for (;;) {
    readings.push([changes, await reading()]);
    const [[before, earlier], [, later]] = readings.slice(-2);
    if (JSON.stringify(earlier) === JSON.stringify(later) && changes === before) {
      Object.assign(summary, later);
      break;
    }
    if (readings.length === READINGS) {
      summary.unsettled = readings.map(([, lists]) => lists);
      break;
    }
  }
} catch (e) {
  summary.failed = failure(e);
}
await client.close().catch(() => {});
process.stdout.write(JSON.stringify(summary) + "\n");
