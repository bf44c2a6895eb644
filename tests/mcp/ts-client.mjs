// Drives `mcpflow serve` (stdio) with the official MCP TypeScript SDK client — a client
// nobody here wrote. Run by crates/cli/tests/it/serve.rs with:
//   MCPFLOW_BIN     the mcpflow binary
//   MCPFLOW_HOME    a fresh data folder
//   SERVERS_FILE    an mcpServers file with the testkit `echo` server
// Prints one line per check and exits 1 at the first failed one.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import assert from 'node:assert/strict';

const env = { ...process.env };
const transport = new StdioClientTransport({
  command: env.MCPFLOW_BIN,
  args: ['serve', '--servers', env.SERVERS_FILE, '--allow-all-servers'],
  env,
  stderr: 'inherit',
});
const client = new Client({ name: 'mcpflow-ts-sdk-test', version: '1.0.0' });
let listChanged = 0;
client.setNotificationHandler(ToolListChangedNotificationSchema, () => { listChanged += 1; });

function check(name) { console.log(`ok - ${name}`); }
function data(result) {
  // Results are JSON in structuredContent and the same JSON as text.
  assert.ok(result.structuredContent, 'structuredContent is set');
  assert.deepEqual(JSON.parse(result.content[0].text), result.structuredContent);
  return result.structuredContent;
}
// The SDK dispatches notifications on a microtask but a response at once, and drops a
// call's progress handler with its response; the server leaves a gap before answering,
// but under load a last notification read in the same chunk as the response can still
// be lost. So: some arrive, in order, each of `total` (the rmcp test counts exactly).
function checkProgress(list, total) {
  assert.ok(list.length >= 1, 'progress notifications arrived');
  list.forEach((p, i) => {
    assert.equal(p.total, total, `notification ${i} has the total (${JSON.stringify(list)})`);
    assert.equal(p.progress, i + 1, `notification ${i} counts up by one (${JSON.stringify(list)})`);
    assert.match(p.message, /^step `\w+` \w+$/);
  });
}

const call = (name, args, progress) =>
  client.callTool({ name, arguments: args }, undefined, { timeout: 60_000, ...(progress ? { onprogress: progress } : {}) });

try {
  await client.connect(transport);
  const info = client.getServerVersion();
  assert.equal(info.name, 'mcpflow');
  check('initialize: the server is mcpflow');

  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name);
  for (const t of ['list_servers', 'list_tools', 'call_tool', 'validate_workflow', 'save_workflow',
    'list_workflows', 'get_workflow', 'run_workflow', 'run_pipeline', 'get_run']) {
    assert.ok(names.includes(t), `tools/list has ${t}`);
  }
  check(`tools/list: ${names.length} tools`);

  const downstream = data(await call('list_tools', { server: 'echo' }));
  assert.ok(downstream.tools.some((t) => t.name === 'echo' && t.server === 'echo'));
  check('list_tools reaches the downstream echo server');

  const blueprint = {
    blueprint: 1, id: 'greeter', name: 'Greeter', expose: true,
    inputs: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
    steps: [
      { id: 'first', kind: 'tool', server: 'echo', tool: 'echo', args: { message: 'hello {{ inputs.name }}' } },
      { id: 'sum', kind: 'tool', server: 'echo', tool: 'add', args: { a: 2, b: 3 } },
      { id: 'last', kind: 'transform', value: { greeting: '{{ first }}', total: '{{ sum.sum }}' } },
    ],
  };
  // echo was listed above, so its tools are checked: a misspelled tool is a warning.
  const typo = data(await call('validate_workflow', {
    blueprint: { ...blueprint, steps: [{ id: 'first', kind: 'tool', server: 'echo', tool: 'ecco', args: { message: 'x' } }] },
  }));
  assert.equal(typo.valid, true, 'a warning does not make it invalid');
  const unknown = typo.diagnostics.find((d) => d.code === 'TOOL_UNKNOWN');
  assert.ok(unknown, `validate_workflow warns of the unknown tool: ${JSON.stringify(typo.diagnostics)}`);
  assert.equal(unknown.pointer, '/steps/0/tool');
  assert.match(unknown.hint, /did you mean `echo`/);
  check('validate_workflow checks tools against the listed servers (TOOL_UNKNOWN with the nearest name)');

  const bad = await call('save_workflow', { blueprint: { ...blueprint, steps: [{ id: 'x', kind: 'nope' }] } });
  assert.equal(bad.isError, true);
  assert.equal(bad.structuredContent.error.code, 'BLUEPRINT_INVALID');
  assert.ok(bad.structuredContent.error.diagnostics.some((d) => d.code === 'UNKNOWN_KIND'));
  check('save_workflow refuses an invalid blueprint with its diagnostics');

  const saved = data(await call('save_workflow', { blueprint }));
  assert.equal(saved.id, 'greeter');
  assert.equal(saved.rev, 1);
  check('save_workflow saves revision 1');

  for (let i = 0; i < 50 && listChanged === 0; i++) await new Promise((r) => setTimeout(r, 100));
  assert.ok(listChanged > 0, 'notifications/tools/list_changed arrived');
  const after = await client.listTools();
  const exposed = after.tools.find((t) => t.name === 'greeter');
  assert.ok(exposed, 'the exposed blueprint is a tool');
  assert.deepEqual(exposed.inputSchema.required, ['name']);
  check('an exposed blueprint is announced (tools/list_changed) and listed with its inputs schema');

  const listed = data(await call('list_workflows', {}));
  assert.deepEqual(listed.workflows.map((w) => w.id), ['greeter']);
  check('list_workflows');

  const progress = [];
  const envelope = data(await call('run_workflow', { id: 'greeter', inputs: { name: 'ts' }, detail: 'steps' },
    (p) => progress.push(p)));
  assert.equal(envelope.status, 'succeeded');
  assert.deepEqual(envelope.output, { greeting: 'hello ts', total: 5 });
  assert.equal(envelope.summary.tool_calls, 2);
  assert.deepEqual(envelope.steps.map((s) => s.status), ['succeeded', 'succeeded', 'succeeded']);
  checkProgress(progress, 3);
  check(`run_workflow by id: succeeded with ${progress.length} progress notifications`);

  const direct = data(await call('greeter', { name: 'exposed' }));
  assert.equal(direct.output.greeting, 'hello exposed');
  check('calling the exposed blueprint as a tool runs it');

  const run = data(await call('get_run', { run_id: envelope.run_id }));
  assert.equal(run.status, 'succeeded');
  assert.equal(run.steps.length, 3);
  check('get_run returns the recorded run');

  const pipeProgress = [];
  const pipe = data(await call('run_pipeline', {
    steps: [
      { id: 'a', server: 'echo', tool: 'add', args: { a: 1, b: 2 } },
      { id: 'b', server: 'echo', tool: 'multiply', args: { a: '{{ a.sum }}', b: 10 } },
      { id: 'c', server: 'echo', tool: 'echo', args: { message: 'product={{ b.product }}' } },
    ],
  }, (p) => pipeProgress.push(p)));
  assert.equal(pipe.aborted, false);
  assert.deepEqual(pipe.steps.map((s) => s.status), ['succeeded', 'succeeded', 'succeeded']);
  assert.match(pipe.steps[2].result, /^product=30(\.0)?$/);
  assert.equal(typeof pipe.total_duration_ms, 'number');
  checkProgress(pipeProgress, 3);
  check('run_pipeline pipes typed values and reports progress');

  const broken = await call('run_pipeline', {
    steps: [{ id: 'a', server: 'echo', tool: 'echo', args: { message: '{{ nowhere.x }}' } }],
  });
  assert.equal(broken.isError, true);
  assert.equal(broken.structuredContent.error.code, 'INTERPOLATION_FAILED');
  check('run_pipeline: a bad template fails before anything runs (INTERPOLATION_FAILED)');

  const nested = await call('run_pipeline', { steps: [{ id: 'a', tool: 'run_pipeline', args: { steps: [] } }] });
  assert.equal(nested.isError, true);
  assert.equal(nested.structuredContent.error.code, 'PIPELINE_RECURSION');
  check('run_pipeline refuses to call its own run tools (PIPELINE_RECURSION)');

  await client.close();
  console.log('all checks passed');
} catch (e) {
  console.error(`not ok - ${e.stack ?? e}`);
  try { await client.close(); } catch { /* already gone */ }
  process.exit(1);
}
