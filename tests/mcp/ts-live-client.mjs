// An agent beside the open studio: the official TypeScript SDK client launches `mcpflow
// serve` on stdio (no options, as an MCP host would), which bridges into the studio's
// engine; it saves a changed version of a blueprint the studio has open, then — when told
// to, by a line `run` on stdin, so the test can look at the studio in between — runs it by
// id. Run by tests/e2e/live.test.mjs with:
//   MCPFLOW_BIN     the mcpflow binary
//   MCPFLOW_HOME    the data folder the studio holds
//   LIVE_BLUEPRINT  a file with the blueprint to save (its id is the one run)
// The client calls itself `live-agent` (its clientInfo name, which the studio shows).
// Prints one line per step (`saved rev N`, `run RUN_ID STATUS`) and exits 1 on a failure.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';

const call = async (client, name, args) => {
  const result = await client.callTool({ name, arguments: args }, undefined, { timeout: 90_000 });
  if (result.isError) throw new Error(`${name} failed: ${JSON.stringify(result.structuredContent ?? result.content)}`);
  return result.structuredContent;
};

/** Resolves at the first line `run` on stdin (rejects when stdin ends first). */
const told = () =>
  new Promise((ok, fail) => {
    const lines = createInterface({ input: process.stdin });
    let said = false;
    lines.on('line', (line) => {
      if (line.trim() !== 'run') return;
      said = true;
      lines.close();
      ok();
    });
    lines.on('close', () => said || fail(new Error('stdin ended before `run`')));
  });

let client;
try {
  const blueprint = JSON.parse(readFileSync(process.env.LIVE_BLUEPRINT, 'utf8'));
  client = new Client({ name: 'live-agent', version: '1.0.0' }, { capabilities: {} });
  await client.connect(new StdioClientTransport({
    command: process.env.MCPFLOW_BIN, args: ['serve'], env: { ...process.env }, stderr: 'inherit',
  }));
  const saved = await call(client, 'save_workflow', { blueprint });
  console.log(`saved rev ${saved.rev}`);
  await told();
  const ran = await call(client, 'run_workflow', { id: blueprint.id });
  console.log(`run ${ran.run_id} ${ran.status}`);
  await client.close();
  process.stdin.destroy();
} catch (e) {
  console.log(`not ok - ${e.stack ?? e}`);
  try { await client?.close(); } catch { /* gone */ }
  process.exit(1);
}
