// A stdio proxy for tests: runs the command after FILE (`node count_calls.mjs FILE cmd args…`),
// passes every line between the client and it unchanged, and appends one line to FILE for each
// `tools/call` the client sends: `<tool> as a task` or `<tool> plain`. So a test counts, from the
// server's side, how many calls a tool got and how.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import readline from 'node:readline';

const [file, command, ...args] = process.argv.slice(2);
const child = spawn(command, args, { stdio: ['pipe', 'inherit', 'inherit'] });
readline
    .createInterface({ input: process.stdin, crlfDelay: Infinity })
    .on('line', line => {
        try {
            const message = JSON.parse(line);
            if (message && message.method === 'tools/call') {
                fs.appendFileSync(file, `${message.params?.name} ${message.params?.task ? 'as a task' : 'plain'}\n`);
            }
        } catch {
            // Not JSON: passed on all the same.
        }
        child.stdin.write(line + '\n');
    })
    .on('close', () => child.stdin.end());
child.on('exit', code => process.exit(code ?? 0));
process.on('SIGTERM', () => child.kill('SIGTERM'));
