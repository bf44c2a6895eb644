// Drives `mcpflow serve` (stdio) with the official MCP TypeScript SDK client as an agent
// would (issue 31): it reads the format from the server, checks and fixes a blueprint for
// a three-step task, saves and runs it, cancels a run, lists runs, deletes the blueprint;
// every wrong input gets its error; a run's question is answered by a new serve process
// after the first one stopped; a run whose serve was killed is resumed with resume_run. Run by crates/cli/tests/it/serve.rs with:
//   MCPFLOW_BIN     the mcpflow binary
//   MCPFLOW_HOME    a fresh data folder
//   SERVERS_FILE    an mcpServers file with the testkit `echo` server
// Prints one line per check (and `size - <answer>: <characters>` for docs/agents.md) and
// exits 1 at the first failed one.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import assert from 'node:assert/strict';

const env = { ...process.env };
function check(name) { console.log(`ok - ${name}`); }

async function connect() {
  const transport = new StdioClientTransport({
    command: env.MCPFLOW_BIN,
    args: ['serve', '--servers', env.SERVERS_FILE, '--allow-all-servers'],
    env,
    stderr: 'inherit',
  });
  const client = new Client({ name: 'mcpflow-ts-agent-test', version: '1.0.0' });
  await client.connect(transport);
  serving = transport;
  return client;
}
let serving;

let client = await connect().catch((e) => { console.error(`not ok - connect: ${e.stack ?? e}`); process.exit(1); });
const call = (name, args) => client.callTool({ name, arguments: args }, undefined, { timeout: 60_000 });
// The answer's size as it travels (the whole JSON-RPC result), for the docs' table.
function size(label, result) { console.log(`size - ${label}: ${JSON.stringify(result).length}`); return result; }
function ok(result) {
  assert.equal(result.isError ?? false, false, JSON.stringify(result));
  return result.structuredContent;
}
function failed(result, code) {
  assert.equal(result.isError, true, JSON.stringify(result));
  const error = result.structuredContent.error ?? result.structuredContent.errors?.[0];
  if (code) assert.equal(error?.code, code, JSON.stringify(result));
  return result.structuredContent;
}
const diag = (report, code) => report.diagnostics.find((d) => d.code === code);

try {
  // 1. The format, from the server itself.
  const { resources } = await client.listResources();
  assert.deepEqual(resources.map((r) => r.uri).sort(), ['mcpflow://format', 'mcpflow://format/schema']);
  const guide = (await client.readResource({ uri: 'mcpflow://format' })).contents[0].text;
  assert.match(guide, /## Templates/);
  const example = JSON.parse(guide.split('```json\n')[1].split('```')[0]);
  const schema = JSON.parse((await client.readResource({ uri: 'mcpflow://format/schema' })).contents[0].text);
  assert.ok(schema.properties.steps, 'the schema describes steps');
  const byTool = size('blueprint_format', await call('blueprint_format', {}));
  assert.equal(byTool.content[0].text, guide);
  check('the format: mcpflow://format (a guide with examples), mcpflow://format/schema, and blueprint_format');

  const { tools } = await client.listTools();
  for (const t of tools) {
    assert.ok(t.annotations && typeof t.annotations.readOnlyHint === 'boolean', `${t.name} has annotations`);
    for (const [name, p] of Object.entries(t.inputSchema.properties ?? {})) {
      assert.ok(p.description, `${t.name}.${name} is described`);
    }
  }
  const runTool = tools.find((t) => t.name === 'run_workflow');
  assert.deepEqual(runTool.inputSchema.oneOf, [{ required: ['id'] }, { required: ['blueprint'] }]);
  check(`tools/list: ${tools.length} tools, each annotated, every property described, oneOf for id/blueprint`);

  // 2. Wrong arguments are refused, naming the property.
  let e = failed(await call('list_tools', { server: 5 }), 'BAD_REQUEST').error;
  assert.equal(e.pointer, '/server');
  e = failed(await call('list_servers', { foo: 1 }), 'BAD_REQUEST').error;
  assert.equal(e.pointer, '/foo');
  assert.match(e.message, /unknown property `foo`/);
  e = failed(await call('call_tool', { tool: 'echo', arguments: { message: 'x' } }), 'BAD_REQUEST').error;
  assert.match(e.message, /did you mean `args`/);
  e = failed(await call('run_workflow', { inputs: {} }), 'BAD_REQUEST').error;
  assert.match(e.message, /give `id` or `blueprint`/);
  e = failed(await call('run_workflow', { id: 'a', detail: 'everything' }), 'BAD_REQUEST').error;
  assert.equal(e.pointer, '/detail');
  check('wrong types, extra properties and a missing id/blueprint are refused with the property named');

  // 3. Validation finds what the run would (the echo server is not listed yet).
  const task = {
    blueprint: 1, id: 'sum-product',
    inputs: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
    steps: [
      { id: 'sum', kind: 'tool', server: 'echo', tool: 'add', args: { a: '{{ inputs.a }}', b: '{{ inputs.b }}' } },
      { id: 'product', kind: 'tool', server: 'echo', tool: 'multiply', args: { a: '{{ sum.sum }}', b: 10 } },
      { id: 'say', kind: 'tool', server: 'echo', tool: 'echo', args: { message: 'result {{ product.product }}' } },
    ],
    output: { said: '{{ say }}', product: '{{ product.product }}' },
  };
  const mistyped = { ...task, steps: [task.steps[0], { ...task.steps[1], tool: 'multiplyy' }, task.steps[2]] };
  let report = ok(await call('validate_workflow', { blueprint: mistyped }));
  const note = diag(report, 'TOOLS_NOT_CHECKED');
  assert.ok(note && /`echo`/.test(note.message), `a note names the unchecked server: ${JSON.stringify(report)}`);
  report = ok(await call('validate_workflow', { blueprint: mistyped, check_tools: true }));
  assert.match(diag(report, 'TOOL_UNKNOWN')?.hint ?? '', /did you mean `multiply`/, JSON.stringify(report));
  assert.equal(diag(report, 'TOOLS_NOT_CHECKED'), undefined);
  check('validate_workflow: a note names the servers not checked; check_tools: true lists them first (TOOL_UNKNOWN)');

  const wrong = async (blueprint, code, pattern) => {
    const r = ok(await call('validate_workflow', { blueprint }));
    const d = diag(r, code);
    assert.ok(d, `${code} in ${JSON.stringify(r.diagnostics)}`);
    if (pattern) assert.match(`${d.message} ${d.hint ?? ''}`, pattern);
    return r;
  };
  const names = { type: 'object', properties: { names: { type: 'array' } } };
  await wrong({ ...example, inputs: names, steps: [{ id: 'x', kind: 'transform', value: '{{ inputs.nmaes }}' }] },
    'TEMPLATE_PATH_ABSENT', /did you mean `names`/);
  await wrong({ ...example, steps: [{ id: 'b', kind: 'transform', value: 'x {{ run.id }}' },
    { id: 'c', kind: 'transform', value: '{{ b.output }}' }] }, 'TEMPLATE_PATH_ABSENT', /is a string/);
  await wrong({ ...example, inputs: { names: { type: 'array' } } }, 'INVALID_INPUTS_SCHEMA');
  await wrong({ ...example, steps: [{ id: 's', kind: 'tool', server: 'echo', tool: 'echo', arguments: {} }] },
    'UNKNOWN_FIELD', /did you mean `args`/);
  const both = await wrong({ ...example, steps: [{ id: 'k', kind: 'nope' }, { id: 'j', kind: 'transform', value: 1, colour: 1 }] },
    'UNKNOWN_KIND');
  assert.ok(diag(both, 'UNKNOWN_FIELD'), `UNKNOWN_KIND hides nothing: ${JSON.stringify(both.diagnostics)}`);
  check('validate_workflow: unknown inputs, a transform\'s fields, a non-object inputs schema, misspelt fields, every diagnostic');

  // 4. Save, run, answers that cost little.
  report = size('validate_workflow (valid)', await call('validate_workflow', { blueprint: task }));
  assert.equal(ok(report).valid, true, JSON.stringify(report));
  const saved = ok(size('save_workflow', await call('save_workflow', { blueprint: task })));
  assert.equal(saved.rev, 1);
  failed(await call('save_workflow', { blueprint: { ...task, id: 'run_workflow', expose: true } }), 'EXPOSE_NAME_TAKEN');
  check('save_workflow saves, and refuses an exposed id that is a built-in tool (EXPOSE_NAME_TAKEN)');

  const full = ok(size('run_workflow (summary)', await call('run_workflow', { id: 'sum-product', inputs: { a: 2, b: 3 } })));
  assert.equal(full.status, 'succeeded');
  // echo's multiply answers a float: 50.0 in text.
  assert.match(full.output.said, /^result 50(\.0)?$/);
  assert.equal(full.output.product, 50);
  const only = size('run_workflow (detail: output)',
    await call('run_workflow', { id: 'sum-product', inputs: { a: 2, b: 3 }, detail: 'output' }));
  assert.deepEqual(only.structuredContent, full.output);
  assert.equal(only._meta['mcpflow/run'].status, 'succeeded');
  size('run_workflow (detail: steps)', await call('run_workflow', { id: 'sum-product', inputs: { a: 2, b: 3 }, detail: 'steps' }));
  size('get_run', await call('get_run', { run_id: full.run_id }));
  size('list_workflows', await call('list_workflows', {}));
  size('list_tools (server: echo)', await call('list_tools', { server: 'echo' }));
  size('list_servers', await call('list_servers', {}));
  check('run_workflow: the envelope, or with detail: output the output alone');

  // isError: true exactly when what was asked failed.
  const nowhere = '/nonexistent-mcpflow-dir/calls.txt';
  failed(size('call_tool (tool failed)', await call('call_tool', { server: 'echo', tool: 'record', args: { file: nowhere, line: 'x' } })), 'TOOL_FAILED');
  ok(size('call_tool', await call('call_tool', { server: 'echo', tool: 'add', args: { a: 1, b: 2 } })));
  const pipe = failed(await call('run_pipeline', { steps: [
    { id: 'a', server: 'echo', tool: 'record', args: { file: nowhere, line: 'x' } },
    { id: 'b', server: 'echo', tool: 'add', args: { a: 1, b: 2 } }] }));
  assert.equal(pipe.aborted, true);
  const goesOn = ok(await call('run_pipeline', { steps: [
    { id: 'a', server: 'echo', tool: 'record', args: { file: nowhere, line: 'x' }, continue_on_error: true },
    { id: 'b', server: 'echo', tool: 'add', args: { a: 1, b: 2 } }] }));
  assert.equal(goesOn.aborted, false);
  failed(await call('list_tools', { server: 'nope' }));
  failed(await call('run_workflow', { blueprint: { blueprint: 1, id: 'broken', steps: [
    { id: 'a', kind: 'tool', server: 'echo', tool: 'record', args: { file: nowhere, line: 'x' } }] } }));
  check('isError: a failed downstream tool, an aborted pipeline, an unknown server, a failed run; not a pipeline that goes on');

  // 5. The lifecycle: cancel a run, list runs, delete the blueprint.
  ok(await call('save_workflow', { blueprint: { blueprint: 1, id: 'slow', steps: [
    { id: 'nap', kind: 'tool', server: 'echo', tool: 'sleep', args: { ms: 60000 } }] } }));
  const slow = call('run_workflow', { id: 'slow' });
  let running;
  for (let i = 0; i < 200 && !running; i++) {
    running = ok(await call('list_runs', { blueprint: 'slow', status: 'running' })).runs[0];
    if (!running) await new Promise((r) => setTimeout(r, 50));
  }
  assert.ok(running, 'the slow run is listed as running');
  const cancelled = ok(size('cancel_run', await call('cancel_run', { run_id: running.run_id })));
  assert.equal(cancelled.status, 'cancelled');
  const slowAnswer = failed(await slow);
  assert.equal(slowAnswer.status, 'cancelled');
  failed(await call('cancel_run', { run_id: running.run_id }), 'RUN_NOT_ACTIVE');
  const listed = ok(size('list_runs (blueprint)', await call('list_runs', { blueprint: 'sum-product' })));
  assert.equal(listed.runs.length, 3);
  assert.deepEqual(ok(await call('list_runs', { waiting: true })).runs, []);
  failed(await call('delete_workflow', { id: 'slow-nope' }), 'BLUEPRINT_NOT_FOUND');
  ok(size('delete_workflow', await call('delete_workflow', { id: 'sum-product' })));
  failed(await call('get_workflow', { id: 'sum-product' }), 'BLUEPRINT_NOT_FOUND');
  assert.equal(ok(await call('get_run', { run_id: full.run_id })).status, 'succeeded', 'its runs stay');
  check('cancel_run, list_runs (blueprint, status, waiting), delete_workflow (its runs stay)');

  // 6. An answer survives the process: asked by one serve, answered through the next.
  const asking = { blueprint: 1, id: 'asking', steps: [
    { id: 'count', kind: 'input', prompt: 'How many?', schema: { type: 'integer' } },
    { id: 'say', kind: 'tool', server: 'echo', tool: 'echo', args: { message: 'n={{ count }}' } }], output: '{{ say }}' };
  ok(await call('save_workflow', { blueprint: asking }));
  const question = failed(size('run_workflow (INPUT_REQUIRED)', await call('run_workflow', { id: 'asking' })), 'INPUT_REQUIRED').error;
  await client.close();
  client = await connect();
  const waiting = ok(await call('list_runs', { waiting: true })).runs;
  assert.deepEqual(waiting.map((r) => r.run_id), [question.run_id]);
  assert.equal(waiting[0].questions[0].step, 'count');
  const answered = ok(size('answer_run', await call('answer_run', { run_id: question.run_id, answer: { action: 'accept', content: { value: 4 } } })));
  assert.equal(answered.status, 'succeeded', JSON.stringify(answered));
  assert.equal(answered.output, 'n=4');
  assert.equal(answered.resumed_from, question.run_id);
  assert.notEqual(answered.run_id, question.run_id);
  const before = ok(await call('get_run', { run_id: question.run_id }));
  assert.equal(before.resumed_by, answered.run_id);
  assert.equal(ok(await call('get_run', { run_id: answered.run_id })).resumed_from, question.run_id);
  check('answer_run from a new serve process resumes the waiting run (resumed_from / resumed_by)');

  // 7. A run whose process died is resumed by resume_run, its finished steps kept.
  ok(await call('save_workflow', { blueprint: { blueprint: 1, id: 'nap', steps: [
    { id: 'first', kind: 'tool', server: 'echo', tool: 'add', args: { a: 1, b: 1 } },
    { id: 'nap', kind: 'tool', server: 'echo', tool: 'sleep', args: { ms: 2000 } }], output: '{{ first.sum }}' } }));
  const napping = call('run_workflow', { id: 'nap' }).catch(() => null);
  let died;
  for (let i = 0; i < 200 && !died; i++) {
    died = ok(await call('list_runs', { blueprint: 'nap', status: 'running' })).runs[0];
    if (!died) await new Promise((r) => setTimeout(r, 50));
  }
  assert.ok(died, 'the nap run is listed as running');
  process.kill(serving.pid, 'SIGKILL');
  await napping;
  try { await client.close(); } catch { /* killed */ }
  client = await connect();
  const interrupted = ok(await call('list_runs', { status: 'interrupted' })).runs.map((r) => r.run_id);
  if (!interrupted.includes(died.run_id)) {
    const all = ok(await call('list_runs', {})).runs.map((r) => [r.run_id, r.blueprint, r.status]);
    assert.fail(`run ${died.run_id} (${JSON.stringify(died)}) is not interrupted; interrupted: ${JSON.stringify(interrupted)}; all runs: ${JSON.stringify(all)}`);
  }
  const resumed = ok(size('resume_run', await call('resume_run', { run_id: died.run_id })));
  assert.equal(resumed.status, 'succeeded', JSON.stringify(resumed));
  assert.equal(resumed.resumed_from, died.run_id);
  failed(await call('resume_run', { run_id: resumed.run_id }), 'BAD_REQUEST');
  check('resume_run resumes a run whose serve was killed; a finished run is not resumed');

  await client.close();
  console.log('all checks passed');
} catch (e) {
  console.error(`not ok - ${e.stack ?? e}`);
  try { await client.close(); } catch { /* already gone */ }
  process.exit(1);
}
