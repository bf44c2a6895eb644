// A streamable HTTP MCP server (stateless, on the official TypeScript SDK's task support)
// whose tasks outlive sessions: one task store for every request, as a server that keeps
// its tasks in a database would. Tool `count-slowly` runs only as a task
// (`execution.taskSupport: "required"`): `n` steps of `ms` milliseconds, each with a status
// message. Every `tools/call` it receives is written to stderr as `tools/call <name> as a
// task` or `… plain` (a plain call of a task-only tool is refused before anything runs), so
// a test can count them; so is every `tasks/cancel <task id>`. Port from `PORT` (0: any); says `listening on <port>` on stderr.
// With `JSON_RESPONSE=1` it answers each request with one JSON body instead of an SSE stream.
import http from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { InMemoryTaskStore, InMemoryTaskMessageQueue } from '@modelcontextprotocol/sdk/experimental/tasks';
import { z } from 'zod';

const store = new InMemoryTaskStore();
const queue = new InMemoryTaskMessageQueue();
const sleep = ms => new Promise(resolve => setTimeout(resolve, ms));

function server() {
    const mcp = new McpServer(
        { name: 'tasks-http', version: '1.0.0' },
        { capabilities: { tasks: { requests: { tools: { call: {} } } } }, taskStore: store, taskMessageQueue: queue }
    );
    mcp.experimental.tasks.registerToolTask(
        'count-slowly',
        {
            description: 'Counts to n, one step every ms milliseconds, as a task',
            inputSchema: { n: z.number().int().min(1).max(100), ms: z.number().int().min(1).max(10000) },
            execution: { taskSupport: 'required' }
        },
        {
            async createTask({ n, ms }, { taskRequestedTtl }) {
                const task = await store.createTask({ ttl: taskRequestedTtl, pollInterval: 200 });
                (async () => {
                    for (let i = 1; i <= n; i++) {
                        await store.updateTaskStatus(task.taskId, 'working', `step ${i} of ${n}`);
                        await sleep(ms);
                    }
                    await store.storeTaskResult(task.taskId, 'completed', {
                        content: [{ type: 'text', text: `counted to ${n}` }],
                        structuredContent: { counted: n }
                    });
                })().catch(error => console.error(`task ${task.taskId} failed: ${error}`));
                return { task };
            },
            async getTask(_args, { taskId }) {
                return await store.getTask(taskId);
            },
            async getTaskResult(_args, { taskId }) {
                return await store.getTaskResult(taskId);
            }
        }
    );
    return mcp;
}

const listener = http.createServer(async (req, res) => {
    if (req.method !== 'POST') {
        res.writeHead(405).end();
        return;
    }
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    let body;
    try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
        res.writeHead(400).end();
        return;
    }
    for (const message of Array.isArray(body) ? body : [body]) {
        if (message && message.method === 'tools/call') {
            console.error(`tools/call ${message.params?.name} ${message.params?.task ? 'as a task' : 'plain'}`);
        } else if (message && message.method === 'tasks/cancel') {
            console.error(`tasks/cancel ${message.params?.taskId}`);
        }
    }
    const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: undefined,
        enableJsonResponse: process.env.JSON_RESPONSE === '1'
    });
    const mcp = server();
    res.on('close', () => {
        transport.close();
        mcp.close();
    });
    await mcp.connect(transport);
    await transport.handleRequest(req, res, body);
});
listener.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
    console.error(`listening on ${listener.address().port}`);
});
