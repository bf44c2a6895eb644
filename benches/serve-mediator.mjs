// What `mcpflow serve` adds as a mediator (issue 35): the official TypeScript SDK client
// calls the echo fixture's `echo` tool N times at concurrency 1 and 32, three ways,
// alternating round after round on this noisy machine:
//   direct        the client talks to `mcpflow-testkit echo` over stdio;
//   call_tool     the client talks to `mcpflow serve` (stdio), whose `call_tool` calls echo;
//   run_workflow  the same serve, `run_workflow` of a one-step blueprint calling echo
//                 (`detail: "output"`, the cheapest answer).
// Prints, per way and concurrency, the median over rounds of the median call latency and
// of the calls per second, and both as ratios to `direct`.
//
// Usage: node benches/serve-mediator.mjs [--calls N] [--rounds R]
//   MCPFLOW_BIN (default target/release/mcpflow), MCPFLOW_TESTKIT (default
//   target/release/mcpflow-testkit): `cargo build --release -p mcpflow-cli -p mcpflow-testkit`.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';

const root = resolve(import.meta.dirname, '..');
const arg = (name, fallback) => {
  const at = process.argv.indexOf(name);
  return at > 0 ? Number(process.argv[at + 1]) : fallback;
};
const calls = arg('--calls', 2000);
const rounds = arg('--rounds', 5);
const bin = process.env.MCPFLOW_BIN ?? join(root, 'target/release/mcpflow');
const testkit = process.env.MCPFLOW_TESTKIT ?? join(root, 'target/release/mcpflow-testkit');
for (const file of [bin, testkit]) {
  if (!existsSync(file)) {
    console.error(`no ${file}: cargo build --release -p mcpflow-cli -p mcpflow-testkit (or set MCPFLOW_BIN, MCPFLOW_TESTKIT)`);
    process.exit(2);
  }
}

const work = mkdtempSync(join(tmpdir(), 'mcpflow-mediator-'));
const home = join(work, 'home');
const servers = join(work, 'servers.json');
writeFileSync(servers, JSON.stringify({ mcpServers: { echo: { command: testkit, args: ['echo'] } } }));
const blueprint = {
  blueprint: 1,
  id: 'mediated-echo',
  inputs: { type: 'object', properties: { message: { type: 'string' } } },
  steps: [{ id: 'say', kind: 'tool', server: 'echo', tool: 'echo', args: { message: '{{ inputs.message }}' } }],
  output: '{{ say }}',
};

const ways = {
  direct: {
    command: testkit,
    args: ['echo'],
    call: (client, i) => client.callTool({ name: 'echo', arguments: { message: `m${i}` } }),
  },
  call_tool: {
    command: bin,
    args: ['serve', '--servers', servers, '--allow-server', 'echo'],
    call: (client, i) =>
      client.callTool({ name: 'call_tool', arguments: { server: 'echo', tool: 'echo', args: { message: `m${i}` } } }),
  },
  run_workflow: {
    command: bin,
    args: ['serve', '--servers', servers, '--allow-server', 'echo'],
    call: (client, i) =>
      client.callTool({
        name: 'run_workflow',
        arguments: { blueprint, inputs: { message: `m${i}` }, detail: 'output' },
      }),
  },
};

/** One measured batch: `calls` calls at `concurrency`; the median latency (µs) and calls/s. */
async function batch(way, concurrency) {
  const { command, args, call } = ways[way];
  const transport = new StdioClientTransport({
    command,
    args,
    env: { ...process.env, MCPFLOW_HOME: home },
    stderr: 'ignore',
  });
  const client = new Client({ name: 'mediator-bench', version: '1.0.0' });
  await client.connect(transport);
  const check = (result, i) => {
    if (result.isError) throw new Error(`${way}: call ${i} failed: ${JSON.stringify(result).slice(0, 400)}`);
  };
  for (let i = 0; i < 20; i++) check(await call(client, i), i); // warm-up: the servers start
  const latencies = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < calls) {
        const i = next++;
        const t = performance.now();
        check(await call(client, i), i);
        latencies.push(performance.now() - t);
      }
    }),
  );
  const wall = performance.now() - started;
  await client.close();
  return { latency: median(latencies) * 1000, rate: calls / (wall / 1000) };
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

const samples = new Map();
try {
  for (let round = 0; round < rounds; round++) {
    for (const concurrency of [1, 32]) {
      // Turn the order each round: no way always runs first.
      const order = Object.keys(ways);
      if (round % 2) order.reverse();
      for (const way of order) {
        const key = `${way}@${concurrency}`;
        if (!samples.has(key)) samples.set(key, []);
        samples.get(key).push(await batch(way, concurrency));
      }
    }
  }
} finally {
  // The first serve started the data folder's service; it goes with the folder.
  spawnSync(bin, ['service', 'stop'], { env: { ...process.env, MCPFLOW_HOME: home }, stdio: 'ignore' });
  rmSync(work, { recursive: true, force: true });
}

console.log(`${calls} echo calls per batch, ${rounds} alternating rounds; medians over rounds`);
console.log('| way | concurrency | call latency | calls/s | latency / direct | calls/s / direct |');
console.log('|---|---|---|---|---|---|');
for (const concurrency of [1, 32]) {
  const direct = samples.get(`direct@${concurrency}`);
  const base = { latency: median(direct.map((s) => s.latency)), rate: median(direct.map((s) => s.rate)) };
  for (const way of Object.keys(ways)) {
    const s = samples.get(`${way}@${concurrency}`);
    const latency = median(s.map((x) => x.latency));
    const rate = median(s.map((x) => x.rate));
    console.log(
      `| ${way} | ${concurrency} | ${latency.toFixed(0)} µs | ${rate.toFixed(0)} | ${(latency / base.latency).toFixed(2)}× | ${(rate / base.rate).toFixed(2)}× |`,
    );
  }
}
