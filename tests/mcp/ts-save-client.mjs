// An MCP host that saves one blueprint and leaves: the official TypeScript SDK client
// launches `mcpflow serve` on stdio (which bridges to the data folder's service, starting
// it when none runs), calls `save_workflow`, and closes. Run by
// crates/cli/tests/it/service.rs with:
//   MCPFLOW_BIN     the mcpflow binary
//   MCPFLOW_HOME    the data folder
//   BLUEPRINT       the blueprint to save, as JSON
// Prints one line per check and exits 1 at the first failed one.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import assert from 'node:assert/strict';

const blueprint = JSON.parse(process.env.BLUEPRINT);
const client = new Client({ name: 'saving-host', version: '1.0.0' }, { capabilities: {} });
try {
  await client.connect(new StdioClientTransport({
    command: process.env.MCPFLOW_BIN, args: ['serve'], env: { ...process.env }, stderr: 'inherit',
  }));
  const result = await client.callTool({ name: 'save_workflow', arguments: { blueprint } });
  assert.notEqual(result.isError, true, JSON.stringify(result.structuredContent ?? result));
  console.log(`ok - saved ${blueprint.id} as revision ${result.structuredContent.rev}`);
  await client.close();
  console.log('all checks passed');
} catch (e) {
  console.log(`not ok - ${e.stack ?? e}`);
  try { await client.close(); } catch { /* gone */ }
  process.exit(1);
}
