// Two MCP hosts on one engine: the official TypeScript SDK client launches `mcpflow serve`
// on stdio twice, with no options, while `mcpflow service` holds the data folder; each
// serve is a bridge to the service. Run by crates/cli/tests/it/service.rs with:
//   MCPFLOW_BIN     the mcpflow binary
//   MCPFLOW_HOME    the data folder the service holds
// The service was started with a servers file naming `echo` (the testkit server).
// Prints one line per check and exits 1 at the first failed one.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import assert from 'node:assert/strict';

function check(name) { console.log(`ok - ${name}`); }
const connect = async (name) => {
  const client = new Client({ name, version: '1.0.0' }, { capabilities: {} });
  await client.connect(new StdioClientTransport({
    command: process.env.MCPFLOW_BIN, args: ['serve'], env: { ...process.env }, stderr: 'inherit',
  }));
  return client;
};
const call = async (client, name, args) => {
  const result = await client.callTool({ name, arguments: args }, undefined, { timeout: 60_000 });
  assert.notEqual(result.isError, true, JSON.stringify(result.structuredContent ?? result));
  return result.structuredContent;
};
const slow = (id, message) => ({
  blueprint: 1, id,
  steps: [
    { id: 'wait', kind: 'tool', server: 'echo', tool: 'sleep', args: { ms: 700 } },
    { id: 'say', kind: 'tool', server: 'echo', tool: 'echo', args: { message }, after: ['wait'] },
  ],
  output: '{{ say }}',
});

const clients = [];
try {
  const a = await connect('host-a');
  const b = await connect('host-b');
  clients.push(a, b);
  check('two `mcpflow serve` bridges connected to one service');

  const saved = await call(a, 'save_workflow', { blueprint: slow('from-host-a', 'hello from a') });
  assert.equal(saved.rev, 1, JSON.stringify(saved));
  const listed = await call(b, 'list_workflows', {});
  assert.ok(JSON.stringify(listed).includes('from-host-a'), `host b sees host a's save: ${JSON.stringify(listed)}`);
  check('a blueprint saved through one bridge is listed through the other');

  const started = Date.now();
  const [ra, rb] = await Promise.all([
    call(a, 'run_workflow', { id: 'from-host-a' }),
    call(b, 'run_workflow', { blueprint: slow('from-host-b', 'hello from b') }),
  ]);
  const took = Date.now() - started;
  assert.equal(ra.status, 'succeeded', JSON.stringify(ra));
  assert.equal(rb.status, 'succeeded', JSON.stringify(rb));
  assert.equal(ra.output, 'hello from a');
  assert.equal(rb.output, 'hello from b');
  console.log(`runs: ${ra.run_id} ${rb.run_id}`);
  check(`both runs succeeded at the same time, in ${took} ms`);

  for (const c of clients) await c.close();
  console.log('all checks passed');
} catch (e) {
  console.log(`not ok - ${e.stack ?? e}`);
  for (const c of clients) { try { await c.close(); } catch { /* gone */ } }
  process.exit(1);
}
