#!/usr/bin/env node
// Runs the official MCP conformance suite (npm @modelcontextprotocol/conformance, pinned in
// package.json) against mcpflow and compares the outcome with tests/conformance/baseline.yml.
// scripts/conformance.sh is the command; this is what it runs.
//
// - Client: every client scenario (`--suite all`: all at once), each with client.mjs
//   driving the real binary ($MCPFLOW_BIN, default target/debug/mcpflow); then the TIMED
//   ones again, alone, and their results are those.
// - Server: `mcpflow serve --http 127.0.0.1:0` in a data folder of its own, reached through
//   bearer-proxy.mjs (the suite sends no token): the suite runs all its server scenarios
//   one after another, and every one it lists is judged except those in NOT_APPLICABLE.
// The server half runs beside the client's concurrent part.
//
// A scenario passes when it recorded at least one SUCCESS check and no FAILURE or WARNING
// (the suite counts a warning as a failure too; a scenario the client never reached
// records no check at all, and that is a failure here, not a pass). Exits 1 when a
// scenario not in the baseline failed, or one in it passed (remove it then). Results:
// target/conformance/{client,server}/…/checks.json, and each suite run's output beside.
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startBearerProxy } from './bearer-proxy.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '../..');
const suite = path.join(repo, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');
const bin = path.resolve(process.env.MCPFLOW_BIN ?? path.join(repo, 'target/debug/mcpflow'));
const baselineFile = path.join(here, 'baseline.yml');
const results = path.join(repo, 'target/conformance');

// Server scenarios that test the suite's own fixture server: they call tools, prompts and
// resources by names only that server has (`test_simple_text`, `test_prompt_with_image`,
// `test://static-text`…). mcpflow serve offers its own tools and stored blueprints, so
// they do not apply (docs/servers.md, "Conformance").
const FIXTURE_NAMES = 'needs the suite fixture server';
const NOT_APPLICABLE = {
  'tools-call-simple-text': `${FIXTURE_NAMES}'s tool test_simple_text`,
  'tools-call-image': `${FIXTURE_NAMES}'s tool test_image_content`,
  'tools-call-audio': `${FIXTURE_NAMES}'s tool test_audio_content`,
  'tools-call-embedded-resource': `${FIXTURE_NAMES}'s tool test_embedded_resource`,
  'tools-call-mixed-content': `${FIXTURE_NAMES}'s tool test_multiple_content_types`,
  'tools-call-with-logging': `${FIXTURE_NAMES}'s tool test_tool_with_logging`,
  'tools-call-with-progress': `${FIXTURE_NAMES}'s tool test_tool_with_progress`,
  'tools-call-sampling': `${FIXTURE_NAMES}'s tool test_sampling`,
  'tools-call-elicitation': `${FIXTURE_NAMES}'s tool test_elicitation`,
  'json-schema-2020-12': `${FIXTURE_NAMES}'s tool json_schema_2020_12_tool`,
  'elicitation-sep1034-defaults': `${FIXTURE_NAMES}'s tool test_elicitation_sep1034_defaults`,
  'elicitation-sep1330-enums': `${FIXTURE_NAMES}'s tool test_elicitation_sep1330_enums`,
  'resources-read-text': `${FIXTURE_NAMES}'s resource test://static-text`,
  'resources-read-binary': `${FIXTURE_NAMES}'s resource test://static-binary`,
  'resources-templates-read': `${FIXTURE_NAMES}'s template test://template/{id}/data`,
  'resources-subscribe': `${FIXTURE_NAMES}'s resource test://watched-resource`,
  'resources-unsubscribe': `${FIXTURE_NAMES}'s resource test://watched-resource`,
  'prompts-get-simple': `${FIXTURE_NAMES}'s prompt test_simple_prompt`,
  'prompts-get-with-args': `${FIXTURE_NAMES}'s prompt test_prompt_with_arguments`,
  'prompts-get-embedded-resource': `${FIXTURE_NAMES}'s prompt test_prompt_with_embedded_resource`,
  'prompts-get-with-image': `${FIXTURE_NAMES}'s prompt test_prompt_with_image`,
  'server-sse-polling': `${FIXTURE_NAMES}'s tool test_reconnection`,
};

// Client scenarios whose checks time the client against the wall clock: `sse-retry` wants
// the reconnection 450–700 ms after the stream closed (the server's `retry` is 500 ms), and
// a machine busy with the other scenarios makes it late. They run again alone, after the
// rest, and that run is the one judged (a process per scenario for them all costs more
// than this second run).
const TIMED = ['sse-retry'];

function fail(message) {
  console.error(`conformance: ${message}`);
  process.exit(1);
}

if (!existsSync(suite)) fail(`${suite} is missing: run \`npm ci\` in ${repo} (scripts/test.sh does)`);
if (!existsSync(bin)) fail(`${bin} is missing: build it with \`cargo build -p mcpflow-cli\` (or set MCPFLOW_BIN)`);

// The suite on Node 20 needs its `fs` given a globSync (node20.mjs).
const suiteArgs = (...args) => ['--import', path.join(here, 'node20.mjs'), suite, ...args];

/** `client:` and `server:` lists of tests/conformance/baseline.yml (the suite's format). */
function readBaseline() {
  const baseline = { client: [], server: [] };
  let list = null;
  for (const raw of readFileSync(baselineFile, 'utf8').split('\n')) {
    const line = raw.replace(/#.*$/, '').trimEnd();
    if (!line.trim()) continue;
    const key = /^(client|server):\s*(\[\])?$/.exec(line);
    const item = /^\s+-\s+(\S+)$/.exec(line);
    if (key) list = baseline[key[1]];
    else if (item && list) list.push(item[1]);
    else fail(`${baselineFile}: cannot read the line ${JSON.stringify(raw)} (expected \`client:\`, \`server:\` or \`  - NAME\`)`);
  }
  return baseline;
}

/** The scenario names `conformance list --client|--server` prints. */
function listScenarios(kind) {
  const out = spawnSync(process.execPath, suiteArgs('list', `--${kind}`), { encoding: 'utf8' });
  if (out.status !== 0) fail(`conformance list --${kind} failed: ${out.stderr}`);
  return [...out.stdout.matchAll(/^\s+- (\S+)/gm)].map((m) => m[1]);
}

/** Runs the suite with `args`, its output into `log`; resolves to its exit code. */
function runSuite(args, log, env = process.env) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, suiteArgs(...args), { cwd: repo, env, stdio: ['ignore', 'pipe', 'pipe'] });
    const chunks = [];
    child.stdout.on('data', (c) => chunks.push(c));
    child.stderr.on('data', (c) => chunks.push(c));
    child.on('close', (code) => {
      writeFileSync(log, Buffer.concat(chunks));
      resolve(code);
    });
  });
}

/** Each scenario's checks under `dir`, from the suite's `<prefix><scenario>-<time>/checks.json`. */
function readChecks(dir, prefix = '') {
  const found = new Map();
  const walk = (relative) => {
    for (const entry of readdirSync(path.join(dir, relative), { withFileTypes: true })) {
      const next = path.join(relative, entry.name);
      if (entry.isDirectory()) walk(next);
      else if (entry.name === 'checks.json') {
        const name = /^(.*)-\d{4}-\d\d-\d\dT[\d-]+Z$/.exec(relative)?.[1];
        if (name) found.set(name.slice(prefix.length), JSON.parse(readFileSync(path.join(dir, next), 'utf8')));
      }
    }
  };
  if (existsSync(dir)) walk('');
  return found;
}

/** `{ passed, detail }` for one scenario's checks (see the rule at the top). */
function judge(checks) {
  if (!checks) return { passed: false, detail: 'no results (the suite did not run it)' };
  const count = (status) => checks.filter((c) => c.status === status).length;
  const [ok, failed, warned] = [count('SUCCESS'), count('FAILURE'), count('WARNING')];
  const detail = `${ok} passed, ${failed} failed${warned ? `, ${warned} warnings` : ''}`;
  if (ok === 0 && failed === 0 && warned === 0) return { passed: false, detail: 'no checks recorded (never reached)' };
  const why = checks
    .filter((c) => c.status === 'FAILURE' || c.status === 'WARNING')
    .map((c) => `      ${c.status.toLowerCase()}: ${c.name}: ${c.errorMessage ?? c.description}`);
  return { passed: failed === 0 && warned === 0, detail, why };
}

/** Runs client scenarios against client.mjs (`--suite all`, or `--scenario NAME`) into `dir`. */
function runClient(selection, dir, log) {
  const command = `node ${path.relative(repo, path.join(here, 'client.mjs'))}`;
  const env = { ...process.env, MCPFLOW_BIN: bin };
  return runSuite(['client', '--command', command, ...selection, '-o', dir], path.join(results, log), env);
}

/** Every client scenario at once; each one's checks. */
async function clientSuite() {
  await runClient(['--suite', 'all'], path.join(results, 'client'), 'client.log');
  return readChecks(path.join(results, 'client'));
}

/** The client scenario `name` alone; its checks. */
async function clientAlone(name) {
  const dir = path.join(results, 'client-alone');
  await runClient(['--scenario', name], dir, `client-alone-${name}.log`);
  return readChecks(dir).get(name);
}

/** Starts `mcpflow serve --http` on a free loopback port; resolves when it says where. */
function startServe(home, token) {
  const child = spawn(bin, ['serve', '--http', '127.0.0.1:0'], {
    env: { ...process.env, MCPFLOW_HOME: home, MCPFLOW_TOKEN: token },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  return new Promise((resolve, reject) => {
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
      const at = /serves MCP at (http:\/\/\S+)\/mcp/.exec(stderr);
      if (at) resolve({ child, url: at[1] });
    });
    child.on('exit', (code) => reject(new Error(`mcpflow serve exited ${code} before serving: ${stderr}`)));
  });
}

async function serverScenarios() {
  const names = listScenarios('server').filter((name) => !(name in NOT_APPLICABLE));
  const dir = path.join(results, 'server');
  const home = mkdtempSync(path.join(tmpdir(), 'mcpflow-conformance-serve-'));
  const token = randomBytes(32).toString('hex');
  const serve = await startServe(path.join(home, 'home'), token);
  const proxy = await startBearerProxy(serve.url, token);
  try {
    // One process runs them all, one after another (a process per scenario costs more
    // in starting node than the scenarios take); those that do not apply fail fast and
    // are not judged.
    await runSuite(['server', '--url', `${proxy.url}/mcp`, '--suite', 'all', '-o', dir], path.join(results, 'server.log'));
  } finally {
    await proxy.close();
    serve.child.kill('SIGTERM');
    await new Promise((resolve) => (serve.child.exitCode === null ? serve.child.on('exit', resolve) : resolve()));
    rmSync(home, { recursive: true, force: true });
  }
  const checks = readChecks(dir, 'server-');
  return names.map((name) => ({ name, ...judge(checks.get(name)) }));
}

/** Prints one mode's scenarios against the baseline; returns its counts and problems. */
function report(mode, outcomes, expected) {
  const problems = [];
  console.log(`\n${mode} scenarios:`);
  for (const o of outcomes) {
    const listed = expected.includes(o.name);
    const mark = o.passed ? (listed ? '!' : '✓') : listed ? '~' : '✗';
    const note = o.passed && listed ? ' — passes, but the baseline lists it: remove it' : listed ? ' (expected: baseline)' : '';
    console.log(`  ${mark} ${o.name}: ${o.detail}${note}`);
    if (!o.passed && !listed) {
      for (const line of o.why ?? []) console.log(line);
      problems.push(`${mode} ${o.name} failed and is not in the baseline`);
    }
    if (o.passed && listed) problems.push(`${mode} ${o.name} passes but is in the baseline`);
  }
  for (const name of expected.filter((n) => !outcomes.some((o) => o.name === n))) {
    problems.push(`the baseline lists ${mode} ${name}, which this run does not have`);
  }
  return { passed: outcomes.filter((o) => o.passed).length, total: outcomes.length, problems };
}

const started = process.hrtime.bigint();
const baseline = readBaseline();
rmSync(results, { recursive: true, force: true });
mkdirSync(results, { recursive: true });
const clientNames = listScenarios('client');
const [checks, server] = await Promise.all([clientSuite(), serverScenarios()]);
for (const name of clientNames.filter((n) => TIMED.includes(n))) checks.set(name, await clientAlone(name));
const client = clientNames.map((name) => ({ name, ...judge(checks.get(name)) }));
const c = report('client', client, baseline.client);
const s = report('server', server, baseline.server);
const seconds = Number(process.hrtime.bigint() - started) / 1e9;
const skipped = Object.keys(NOT_APPLICABLE).length;
console.log(
  `\nconformance: client ${c.passed}/${c.total}, server ${s.passed}/${s.total} applicable ` +
    `(${skipped} not applicable), in ${seconds.toFixed(1)} s; results in ${path.relative(repo, results)}/`,
);
const problems = [...c.problems, ...s.problems];
if (problems.length) {
  for (const p of problems) console.log(`FAILED: ${p}`);
  console.log(`(the suite's own output: ${path.relative(repo, results)}/*.log; the baseline: ${path.relative(repo, baselineFile)})`);
  process.exit(1);
}
