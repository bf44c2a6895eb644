// An MCP server on the official TypeScript SDK (`McpServer`) with one tool, `meta`, that returns
// the `_meta` of its request as the SDK hands it to a tool (`extra._meta`): {traceparent,
// tracestate, meta} (null where absent), so a test sees the W3C trace context a client sent.
// Over stdio by default; with `--http`, streamable HTTP with sessions (`Mcp-Session-Id`) on
// 127.0.0.1, port from `PORT` (0: any), saying `listening on <port>` on stderr.
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';

function server() {
    const mcp = new McpServer({ name: 'meta-ts', version: '1.0.0' });
    mcp.registerTool(
        'meta',
        { description: "Return the request's _meta: {traceparent, tracestate, meta}" },
        async extra => {
            const meta = extra._meta ?? {};
            const value = { traceparent: meta.traceparent ?? null, tracestate: meta.tracestate ?? null, meta };
            return { content: [{ type: 'text', text: JSON.stringify(value) }], structuredContent: value };
        }
    );
    return mcp;
}

if (!process.argv.includes('--http')) {
    await server().connect(new StdioServerTransport());
} else {
    // One transport (and server) per session, found by its `Mcp-Session-Id`.
    const sessions = new Map();
    const listener = http.createServer(async (req, res) => {
        const chunks = [];
        for await (const chunk of req) chunks.push(chunk);
        let body;
        if (chunks.length > 0) {
            try {
                body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
            } catch {
                res.writeHead(400).end();
                return;
            }
        }
        const id = req.headers['mcp-session-id'];
        let transport = typeof id === 'string' ? sessions.get(id) : undefined;
        if (!transport) {
            if (req.method !== 'POST' || typeof id === 'string') {
                res.writeHead(typeof id === 'string' ? 404 : 405).end();
                return;
            }
            transport = new StreamableHTTPServerTransport({
                sessionIdGenerator: () => randomUUID(),
                onsessioninitialized: sessionId => sessions.set(sessionId, transport)
            });
            transport.onclose = () => {
                if (transport.sessionId) sessions.delete(transport.sessionId);
            };
            await server().connect(transport);
        }
        await transport.handleRequest(req, res, body);
    });
    listener.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
        console.error(`listening on ${listener.address().port}`);
    });
}
