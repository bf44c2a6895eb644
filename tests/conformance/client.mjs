#!/usr/bin/env node
// The client under test, as the conformance suite starts it for each client scenario:
// `node tests/conformance/client.mjs URL`, with MCP_CONFORMANCE_SCENARIO (the scenario's
// name) and, for some, MCP_CONFORMANCE_CONTEXT (a JSON object: client_id, client_secret…).
//
// It drives the real `mcpflow` binary ($MCPFLOW_BIN) as a person would, in a data folder
// of its own: the scripted server goes into an `mcpServers` file; auth scenarios sign in
// with `mcpflow auth login` (the browser is tests/e2e/follow-redirects.mjs, which follows
// the authorization server's redirects back to mcpflow's loopback listener); then
// `mcpflow servers test`, then `mcpflow run` of a one-step blueprint calling the
// scenario's tool. The suite judges what the server saw; this exits 1 when a command
// failed, with what each printed, so its stderr.txt says why.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '../..');
const url = process.argv[2];
const scenario = process.env.MCP_CONFORMANCE_SCENARIO;
if (!url || !scenario) {
  console.error('usage: MCP_CONFORMANCE_SCENARIO=NAME node tests/conformance/client.mjs URL (the suite sets both)');
  process.exit(2);
}
const context = process.env.MCP_CONFORMANCE_CONTEXT ? JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT) : {};
const bin = process.env.MCPFLOW_BIN ?? path.join(repo, 'target/debug/mcpflow');

// The tool each scripted server offers, its arguments, and the answers a person gives to
// the questions it asks (keyed by step id, as `--answers` takes them). `initialize` has
// none: `servers test` is all a person would do there.
const calls = {
  initialize: null,
  tools_call: { tool: 'add_numbers', args: { a: 5, b: 3 } },
  // The person accepts the form and fills in nothing: the schema's defaults are sent.
  'elicitation-sep1034-client-defaults': { tool: 'test_client_elicitation_defaults', args: {}, answers: { call: {} } },
  'sse-retry': { tool: 'test_reconnection', args: {} },
};
const call = scenario in calls ? calls[scenario] : { tool: 'test-tool', args: {} };

const dir = mkdtempSync(path.join(tmpdir(), 'mcpflow-conformance-'));
const env = {
  ...process.env,
  MCPFLOW_HOME: path.join(dir, 'home'),
  MCPFLOW_TOKEN_STORE: 'file',
  BROWSER: `node ${path.join(repo, 'tests/e2e/follow-redirects.mjs')}`,
};

// The `oauth` object a person would write from what the scenario hands out: a client
// registered beforehand, its secret only as `${env:NAME}`.
const oauth = {};
if (context.client_id) oauth.client_id = context.client_id;
if (context.client_secret) {
  oauth.client_secret = '${env:CONFORMANCE_CLIENT_SECRET}';
  env.CONFORMANCE_CLIENT_SECRET = context.client_secret;
}
if (context.private_key_pem) {
  oauth.private_key = '${env:CONFORMANCE_PRIVATE_KEY}';
  env.CONFORMANCE_PRIVATE_KEY = context.private_key_pem;
}
if (scenario.startsWith('auth/client-credentials')) oauth.grant = 'client_credentials';
// A URL client id is a document its owner publishes; the scripted authorization server
// knows this one (docs/servers.md, "Client ID metadata documents").
if (scenario === 'auth/basic-cimd') oauth.client_metadata_url = 'https://conformance-test.local/client-metadata.json';
const entry = { url, ...(Object.keys(oauth).length ? { oauth } : {}) };
const servers = path.join(dir, 'servers.json');
writeFileSync(servers, JSON.stringify({ mcpServers: { conformance: entry } }, null, 2));

let failed = false;
function mcpflow(...args) {
  console.log(`$ mcpflow ${args.join(' ')}`);
  const out = spawnSync(bin, args, { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  if (out.error) {
    console.error(`cannot run ${bin}: ${out.error.message} (build it: cargo build -p mcpflow-cli)`);
    process.exit(1);
  }
  process.stdout.write(out.stdout);
  process.stderr.write(out.stderr);
  if (out.status !== 0) {
    console.error(`mcpflow ${args[0]} exited ${out.status}`);
    failed = true;
  }
  return out.status === 0;
}

try {
  if (scenario.startsWith('auth/')) mcpflow('auth', 'login', 'conformance', '--servers', servers, '--timeout', '20');
  mcpflow('servers', 'test', 'conformance', '--servers', servers);
  if (call) {
    const blueprint = path.join(dir, 'call.blueprint.json');
    writeFileSync(
      blueprint,
      JSON.stringify({
        blueprint: 1,
        id: 'conformance-call',
        steps: [{ id: 'call', kind: 'tool', server: 'conformance', tool: call.tool, args: call.args }],
        output: { result: '{{ call }}' },
      }),
    );
    const args = ['run', blueprint, '--servers', servers, '--json', '--quiet'];
    // A person running against a signed-in server lets the run sign in again for a wider
    // scope when a tool asks for one (`--sign-in`).
    if (scenario.startsWith('auth/')) args.push('--sign-in');
    if (call.answers) {
      const answers = path.join(dir, 'answers.json');
      writeFileSync(answers, JSON.stringify(call.answers));
      args.push('--answers', answers);
    }
    mcpflow(...args);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
