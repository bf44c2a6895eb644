// A loopback proxy in front of `mcpflow serve --http` for the server scenarios: the suite
// connects without credentials, and serve wants its bearer token, so this adds
// `Authorization: Bearer TOKEN` to every request and passes the rest through as it came
// (answers streamed, SSE included).
//
// Host and Origin stay what the suite sent, so `dns-rebinding-protection` tests serve's
// own check: only the port is changed, and only where it names this proxy (a client that
// reached the proxy at localhost:P reached serve at localhost:S). `evil.example.com`
// reaches serve as `evil.example.com`.
import http from 'node:http';

/**
 * Listens on 127.0.0.1 (a port the system picks) and forwards to `target`
 * (`http://127.0.0.1:PORT`), adding the bearer token. Resolves to `{ url, close }`.
 */
export async function startBearerProxy(target, token) {
  const upstream = new URL(target);
  let own = 0;
  const repoint = (value, prefix = '') => {
    const match = /^(.*):(\d+)$/.exec(value.slice(prefix.length));
    if (!value.startsWith(prefix) || !match || Number(match[2]) !== own) return value;
    return `${prefix}${match[1]}:${upstream.port}`;
  };
  const server = http.createServer((req, res) => {
    const headers = { ...req.headers, authorization: `Bearer ${token}` };
    if (headers.host) headers.host = repoint(headers.host);
    if (headers.origin) headers.origin = repoint(headers.origin, 'http://');
    const forward = http.request(
      { hostname: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forward.on('error', (error) => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(`the bearer proxy could not reach mcpflow serve at ${target}: ${error.message}`);
    });
    res.on('close', () => forward.destroy());
    req.pipe(forward);
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  own = server.address().port;
  return {
    url: `http://localhost:${own}`,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(resolve));
    },
  };
}
