// Sampling through `mcpflow serve` (stdio), answered by the official MCP TypeScript SDK
// client's sampling handler — the agent's own model. Run by crates/cli/tests/it/sampling.rs
// with:
//   MCPFLOW_BIN     the mcpflow binary
//   MCPFLOW_HOME    a fresh data folder (no sampling provider configured)
//   SERVERS_FILE    an mcpServers file: `everything` (server-everything, "sampling": true),
//                   `everything_off` (the same, switch off), `interactive` (the SDK's
//                   simpleTaskInteractive example over HTTP, "sampling": true)
// Prints one line per check and exits 1 at the first failed one.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CreateMessageRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import assert from 'node:assert/strict';

function check(name) { console.log(`ok - ${name}`); }

// Each client starts its own `mcpflow serve`, with a data folder of its own.
function connect(name, capabilities) {
  const transport = new StdioClientTransport({
    command: process.env.MCPFLOW_BIN,
    args: ['serve', '--servers', process.env.SERVERS_FILE, '--allow-all-servers'],
    env: { ...process.env, MCPFLOW_HOME: `${process.env.MCPFLOW_HOME}/${name}` },
    stderr: 'inherit',
  });
  const client = new Client({ name: 'mcpflow-ts-sampling-test', version: '1.0.0' }, { capabilities });
  return { client, connected: client.connect(transport) };
}

const step = (server, tool, args) => ({
  blueprint: 1, id: `sample_${server}_${tool.replaceAll('-', '_')}`, name: 'Sampling',
  steps: [{ id: 'ask', kind: 'tool', server, tool, args }],
});
const run = (client, blueprint) => client.callTool(
  { name: 'run_workflow', arguments: { blueprint } }, undefined, { timeout: 60_000 });

const asked = [];
const agent = connect('agent', { sampling: {} });
agent.client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
  asked.push(request.params);
  const last = request.params.messages.at(-1).content;
  return {
    role: 'assistant',
    content: { type: 'text', text: `the agent says: ${last.text}` },
    model: 'agent-model',
    stopReason: 'endTurn',
  };
});
const plain = connect('plain', {});

try {
  await agent.connected;
  await plain.connected;

  // (a) server-everything's trigger-sampling-request, its switch on: the agent answers.
  const ok = await run(agent.client, step('everything', 'trigger-sampling-request', { prompt: 'name a colour', maxTokens: 20 }));
  assert.notEqual(ok.isError, true, JSON.stringify(ok.structuredContent));
  const envelope = ok.structuredContent;
  assert.equal(envelope.status, 'succeeded');
  assert.match(envelope.output, /the agent says: Resource trigger-sampling-request context: name a colour/);
  assert.match(envelope.output, /agent-model/);
  assert.equal(asked.length, 1, 'the agent was asked once');
  assert.equal(asked[0].systemPrompt, 'You are a helpful test server.');
  assert.equal(asked[0].maxTokens, 20);
  check('trigger-sampling-request through serve: the calling client\'s model answered');

  // The switch off: refused, and the agent is never asked.
  const off = await run(agent.client, step('everything_off', 'trigger-sampling-request', { prompt: 'x' }));
  assert.equal(off.isError, true);
  assert.equal(off.structuredContent.status, 'failed');
  const refused = off.structuredContent.errors[0];
  assert.equal(refused.code, 'SAMPLING_NOT_ALLOWED', JSON.stringify(off.structuredContent));
  assert.match(refused.message, /`everything_off`/);
  assert.equal(asked.length, 1, 'the agent was not asked for a server whose switch is off');
  check('a server whose switch is off: SAMPLING_NOT_ALLOWED, the client never asked');

  // The TypeScript SDK's simpleTaskInteractive: write_haiku samples from inside a task.
  const haiku = await run(agent.client, step('interactive', 'write_haiku', { topic: 'rivers' }));
  assert.notEqual(haiku.isError, true, JSON.stringify(haiku.structuredContent));
  assert.equal(haiku.structuredContent.output, 'Haiku:\nthe agent says: Write a haiku about rivers');
  assert.equal(asked.length, 2);
  check('simpleTaskInteractive write_haiku (a task) through serve: the client\'s model answered');

  // server-everything's trigger-sampling-request-async: a client-side task on mcpflow's
  // side, forwarded to the agent as a plain request.
  const later = await run(agent.client, step('everything', 'trigger-sampling-request-async', { prompt: 'a river' }));
  assert.notEqual(later.isError, true, JSON.stringify(later.structuredContent));
  assert.match(later.structuredContent.output, /\[COMPLETED\] Async sampling completed!/);
  assert.match(later.structuredContent.output, /Task created:/);
  assert.match(later.structuredContent.output, /the agent says: Resource trigger-sampling-request-async context: a river/);
  assert.equal(asked.length, 3);
  assert.equal(asked[2].task, undefined, 'forwarded without the task');
  check('trigger-sampling-request-async through serve: a task for the server, the client\'s model answered');

  // (c) A client that did not declare sampling, and no provider: SAMPLING_UNAVAILABLE.
  const none = await run(plain.client, step('everything', 'trigger-sampling-request', { prompt: 'x' }));
  assert.equal(none.isError, true);
  const unavailable = none.structuredContent.errors[0];
  assert.equal(unavailable.code, 'SAMPLING_UNAVAILABLE', JSON.stringify(none.structuredContent));
  assert.match(unavailable.message, /settings\.json/);
  assert.equal(asked.length, 3, 'the sampling client was not asked for another client\'s run');
  check('a client without sampling and no provider: SAMPLING_UNAVAILABLE naming what to configure');

  console.log('all checks passed');
  await agent.client.close();
  await plain.client.close();
  process.exit(0);
} catch (e) {
  console.log(`not ok - ${e.stack ?? e}`);
  process.exit(1);
}
