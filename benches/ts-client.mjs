// The bare official TypeScript SDK client, for `scripts/bench-calls.sh`: starts
// server-everything over stdio, calls its `echo` tool N times one after another (as the
// blueprint the bench runs with mcpflow does), and exits.
// Usage: node benches/ts-client.mjs N
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const n = Number(process.argv[2] ?? "1");
const transport = new StdioClientTransport({
  command: "node",
  args: ["node_modules/@modelcontextprotocol/server-everything/dist/index.js", "stdio"],
  stderr: "ignore",
});
const client = new Client({ name: "bench", version: "1.0.0" });
await client.connect(transport);
for (let i = 0; i < n; i++) {
  const result = await client.callTool({ name: "echo", arguments: { message: "hi" } });
  if (result.isError) throw new Error(`call ${i} failed: ${JSON.stringify(result)}`);
}
await client.close();
