// People in the loop through `mcpflow serve` (stdio), driven by the official MCP
// TypeScript SDK client. Run by crates/cli/tests/it/people.rs with:
//   MCPFLOW_BIN     the mcpflow binary
//   MCPFLOW_HOME    a fresh data folder
//   SERVERS_FILE    an mcpServers file naming `everything` (server-everything, stdio)
// 1. A client that declared elicitation (form and URL) answers the questions of a run:
//    server-everything's `trigger-elicitation-request` (form) and `trigger-url-elicitation`
//    (URL) reach it as elicitation/create with the server's message, schema and URL, and
//    so does an `input` step of the blueprint, and `trigger-elicitation-request-async`
//    (which mcpflow's pool runs as a client-side task for the server, and forwards here as
//    a plain elicitation); the answers reach the tools' output; and the TypeScript SDK's
//    simpleTaskInteractive `confirm_delete` (a task that asks while it is input_required).
// 2. A client that declared none gets INPUT_REQUIRED at once (the run waits), sees the
//    question in get_run, and answer_run finishes the run.
// Prints one line per check and exits 1 at the first failed one.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import assert from 'node:assert/strict';

const env = { ...process.env };
const args = ['serve', '--servers', env.SERVERS_FILE, '--allow-all-servers'];
// Each client starts its own `mcpflow serve`, with a data folder of its own (a store has
// one owner at a time).
const connect = async (name, capabilities) => {
  const client = new Client({ name, version: '1.0.0' }, { capabilities });
  const home = `${env.MCPFLOW_HOME}-${name}`;
  const transport = new StdioClientTransport({
    command: env.MCPFLOW_BIN, args, env: { ...env, MCPFLOW_HOME: home }, stderr: 'inherit',
  });
  return { client, transport };
};

function check(name) { console.log(`ok - ${name}`); }
function data(result) {
  assert.ok(result.structuredContent, `structuredContent is set: ${JSON.stringify(result)}`);
  return result.structuredContent;
}
const text = (v) => JSON.stringify(v);

const VERIFY_URL = 'https://example.com/verify-mcpflow';
const blueprint = {
  blueprint: 1, id: 'people-through-serve',
  steps: [
    { id: 'form', kind: 'tool', server: 'everything', tool: 'trigger-elicitation-request', args: {} },
    { id: 'url', kind: 'tool', server: 'everything', tool: 'trigger-url-elicitation',
      args: { url: VERIFY_URL, message: 'Open the page to verify' } },
    { id: 'count', kind: 'input', prompt: 'How many copies?', schema: { type: 'integer' }, default: 2 },
    { id: 'later', kind: 'tool', server: 'everything', tool: 'trigger-elicitation-request-async', args: {} },
  ],
  output: { form: '{{ form }}', url: '{{ url }}', count: '{{ count }}', later: '{{ later }}' },
};

const clients = [];
try {
  // 1. The client answers.
  const a = await connect('mcpflow-ts-elicit', { elicitation: { form: {}, url: {} } });
  clients.push(a.client);
  const asked = [];
  a.client.setRequestHandler(ElicitRequestSchema, async (request) => {
    const p = request.params;
    asked.push(p);
    if (p.mode === 'url') return { action: 'accept' };
    if (p.requestedSchema.properties.confirm) return { action: 'accept', content: { confirm: true } };
    if (p.requestedSchema.properties.favoriteColor) {
      return { action: 'accept', content: { name: 'Grace Hopper', favoriteColor: 'Green', agreeToTerms: true } };
    }
    if (p.requestedSchema.properties.name) {
      return { action: 'accept', content: { name: 'Ada Lovelace', check: true } };
    }
    if (p.requestedSchema.properties.value) return { action: 'accept', content: { value: 7 } };
    return { action: 'decline' };
  });
  await a.client.connect(a.transport);
  const started = Date.now();
  const envelope = data(await a.client.callTool({ name: 'run_workflow', arguments: { blueprint } }, undefined,
    { timeout: 60_000 }));
  assert.equal(envelope.status, 'succeeded', text(envelope));
  assert.match(text(envelope.output.form), /Name: Ada Lovelace/);
  assert.match(text(envelope.output.form), /Agreed to terms: true/);
  assert.match(text(envelope.output.url), /User completed the URL elicitation flow/);
  assert.match(text(envelope.output.url), /verify-mcpflow/);
  assert.equal(envelope.output.count, 7);
  assert.match(text(envelope.output.later), /\[COMPLETED\]/);
  assert.match(text(envelope.output.later), /Task created:/);
  assert.match(text(envelope.output.later), /Name: Grace Hopper/);
  assert.match(text(envelope.output.later), /Favorite Color: Green/);
  check(`run_workflow: the client's answers reach the tools' output (${Date.now() - started} ms)`);

  const form = asked.find((p) => p.mode !== 'url' && p.requestedSchema.properties.check);
  assert.ok(form, `a form elicitation came: ${text(asked)}`);
  assert.equal(form.message, 'Please provide inputs for the following fields:');
  assert.deepEqual(form.requestedSchema.required, ['name']);
  assert.equal(form.requestedSchema.properties.name.description, 'Your full, legal name');
  check('the form elicitation carries the server\'s message and schema');
  const url = asked.find((p) => p.mode === 'url');
  assert.ok(url, `a URL elicitation came: ${text(asked)}`);
  assert.equal(url.url, VERIFY_URL);
  assert.equal(url.message, 'Open the page to verify');
  assert.ok(url.elicitationId, 'a URL elicitation has an id');
  check('the URL elicitation carries the server\'s URL and message');
  const input = asked.find((p) => p.mode !== 'url' && p.requestedSchema.properties.value);
  assert.ok(input, `the input step came as a form: ${text(asked)}`);
  assert.equal(input.message, 'How many copies?');
  assert.equal(input.requestedSchema.properties.value.type, 'integer');
  assert.equal(input.requestedSchema.properties.value.default, 2);
  check('an input step is asked as a form elicitation with its default');
  const async = asked.find((p) => p.mode !== 'url' && p.requestedSchema.properties.favoriteColor);
  assert.ok(async, `the async elicitation came: ${text(asked)}`);
  assert.match(async.message, /async task demo/);
  assert.equal(async.task, undefined, 'forwarded as a plain elicitation');
  check('trigger-elicitation-request-async: a task on mcpflow\'s side, a plain question to the client');

  // The SDK's simpleTaskInteractive: confirm_delete asks from inside its task.
  const confirm = data(await a.client.callTool({ name: 'run_workflow', arguments: { blueprint: {
    blueprint: 1, id: 'confirm-through-serve',
    steps: [{ id: 'confirm', kind: 'tool', server: 'interactive', tool: 'confirm_delete', args: { filename: 'notes.txt' } }],
    output: '{{ confirm }}',
  } } }, undefined, { timeout: 60_000 }));
  assert.equal(confirm.status, 'succeeded', text(confirm));
  assert.equal(confirm.output, "Deleted 'notes.txt'");
  const asked_confirm = asked.find((p) => p.requestedSchema?.properties?.confirm);
  assert.ok(asked_confirm, `confirm_delete's question came: ${text(asked)}`);
  assert.match(asked_confirm.message, /notes\.txt/);
  check('simpleTaskInteractive confirm_delete (a task asking) through serve: the client\'s answer deletes');

  // A trial call_tool is transparent too.
  asked.length = 0;
  const trial = data(await a.client.callTool({ name: 'call_tool',
    arguments: { server: 'everything', tool: 'trigger-elicitation-request', args: {} } }));
  assert.match(text(trial.output), /Name: Ada Lovelace/);
  assert.equal(asked.length, 1);
  check('call_tool forwards the server\'s elicitation to the client too');

  // A declined approval gate fails the run as the blueprint says.
  const gate = {
    blueprint: 1, id: 'gate',
    steps: [{ id: 'approve_delete', kind: 'input', prompt: 'Delete 40 pods?', approve: true }],
  };
  const rejected = await a.client.callTool({ name: 'run_workflow', arguments: { blueprint: gate } });
  assert.equal(rejected.isError, true, text(rejected));
  assert.equal(rejected.structuredContent.errors[0].code, 'INPUT_REJECTED', text(rejected.structuredContent));
  check('an approval the client declines fails the run with INPUT_REJECTED');

  // 2. The client cannot answer.
  const b = await connect('mcpflow-ts-no-elicit', {});
  clients.push(b.client);
  await b.client.connect(b.transport);
  const only = { ...blueprint, steps: [blueprint.steps[0]], output: '{{ form }}' };
  const before = Date.now();
  const waiting = await b.client.callTool({ name: 'run_workflow', arguments: { blueprint: only } }, undefined,
    { timeout: 60_000 });
  const took = Date.now() - before;
  assert.equal(waiting.isError, true, text(waiting));
  const error = waiting.structuredContent.error;
  assert.equal(error.code, 'INPUT_REQUIRED', text(error));
  assert.ok(took < 15_000, `INPUT_REQUIRED came in ${took} ms`);
  assert.match(error.message, /step `form`/);
  assert.match(error.message, /name \(required\)/);
  assert.match(error.message, /answer_run/);
  assert.ok(error.run_id, 'the run id is given');
  assert.equal(error.questions.length, 1);
  const question = error.questions[0];
  assert.equal(question.step, 'form');
  assert.equal(question.server, 'everything');
  assert.ok(question.fields.some((f) => f.name === 'name' && f.required), text(question.fields));
  assert.ok(error.message.includes(question.question_id), 'the message names the question');
  check(`without elicitation: INPUT_REQUIRED in ${took} ms naming the run, step, question and fields`);

  const pending = data(await b.client.callTool({ name: 'get_run', arguments: { run_id: error.run_id } }));
  assert.ok(['running', 'waiting'].includes(pending.status), pending.status);
  assert.deepEqual(pending.questions.map((q) => q.question_id), [question.question_id]);
  check('get_run shows the open question of the waiting run');

  const bad = await b.client.callTool({ name: 'answer_run',
    arguments: { run_id: error.run_id, answer: { action: 'accept', content: { check: true } } } });
  assert.equal(bad.isError, true);
  assert.equal(bad.structuredContent.error.code, 'BAD_REQUEST', text(bad.structuredContent));
  assert.match(bad.structuredContent.error.message, /name: required/);
  check('answer_run refuses an answer without the required field, and the question stays open');

  const done = data(await b.client.callTool({ name: 'answer_run',
    arguments: { run_id: error.run_id, answer: { action: 'accept', content: { name: 'Grace Hopper' } } } },
  undefined, { timeout: 60_000 }));
  assert.equal(done.status, 'succeeded', text(done));
  assert.equal(done.run_id, error.run_id);
  assert.match(text(done.output), /Name: Grace Hopper/);
  check('answer_run (no question_id: the only open one) finishes the run with the answer in the output');

  const again = await b.client.callTool({ name: 'answer_run',
    arguments: { run_id: error.run_id, answer: { action: 'decline' } } });
  assert.equal(again.isError, true);
  assert.equal(again.structuredContent.error.code, 'QUESTION_NOT_OPEN');
  check('answering a finished run is QUESTION_NOT_OPEN');

  // 3. A client that declared form mode only: a URL question is not sent to it.
  const c = await connect('mcpflow-ts-form-only', { elicitation: { form: {} } });
  clients.push(c.client);
  let formOnlyAsked = 0;
  c.client.setRequestHandler(ElicitRequestSchema, async () => { formOnlyAsked += 1; return { action: 'decline' }; });
  await c.client.connect(c.transport);
  const urlOnly = { ...blueprint, steps: [blueprint.steps[1]], output: '{{ url }}' };
  const urlWaits = await c.client.callTool({ name: 'run_workflow', arguments: { blueprint: urlOnly } }, undefined,
    { timeout: 60_000 });
  assert.equal(urlWaits.isError, true, text(urlWaits));
  const urlError = urlWaits.structuredContent.error;
  assert.equal(urlError.code, 'INPUT_REQUIRED', text(urlError));
  assert.match(urlError.message, /no URL-mode elicitation/);
  assert.equal(urlError.questions[0].url, VERIFY_URL);
  assert.equal(formOnlyAsked, 0, 'the form-only client was not sent the URL question');
  const visited = data(await c.client.callTool({ name: 'answer_run',
    arguments: { run_id: urlError.run_id, step: 'url', answer: { action: 'accept' } } }));
  assert.equal(visited.status, 'succeeded', text(visited));
  assert.match(text(visited.output), /User completed the URL elicitation flow/);
  check('a form-only client: the URL question waits for answer_run (by step), which finishes the run');

  for (const c of clients) await c.close();
  console.log('all checks passed');
} catch (e) {
  console.error(`not ok - ${e.stack ?? e}`);
  for (const c of clients) { try { await c.close(); } catch { /* already gone */ } }
  process.exit(1);
}
