// The palette's grouped "servers waiting for approval" entry: which servers it holds (those
// never listed); a server listed before shows its remembered tools in its own section.

import { describe, expect, it } from 'vitest';
import type { ServerInfo, ServerOffer } from '../../backend';
import { isRemembered, isUnlisted, isWaiting, shortCommand, waitingServers, waitingTitle } from './waiting';

const refused = (server: string, message = `server \`${server}\` is not approved`): ServerOffer => ({
  server,
  protocol_version: null,
  tools: [],
  resources: [],
  prompts: [],
  error: { code: 'SERVER_NOT_APPROVED', message } as ServerOffer['error'],
  listed_at: null,
});
const listed = (server: string): ServerOffer => ({
  server,
  protocol_version: null,
  tools: [{ server, name: 'echo', description: null, input_schema: {} } as unknown as ServerOffer['tools'][number]],
  resources: [],
  prompts: [],
  error: null,
  listed_at: null,
});
const info = (name: string, command: string | null, approved = false): ServerInfo =>
  ({ name, transport: 'stdio', command, approved, config: {} }) as unknown as ServerInfo;

describe('servers waiting for approval', () => {
  const offers = [refused('memory'), listed('echo'), refused('everything'), refused('cluster', 'boom'), {
    ...listed('broken'),
    error: { code: 'SERVER_START_FAILED', message: 'exit 1' } as ServerOffer['error'],
  }];
  const servers = [
    info('memory', 'node /repo/node_modules/@modelcontextprotocol/server-memory/dist/index.js (env: MEMORY_FILE_PATH)'),
    info('everything', 'node /repo/node_modules/@modelcontextprotocol/server-everything/dist/index.js stdio'),
    info('echo', null, true),
  ];

  it('gathers only the refused-for-approval servers, in palette order, each with its command', () => {
    expect(waitingServers(offers, servers)).toEqual([
      { server: 'memory', command: servers[0]?.command },
      { server: 'everything', command: servers[1]?.command },
      // not in the servers list (yet): the refusal's text stands in for the command
      { server: 'cluster', command: 'boom' },
    ]);
    expect(offers.filter(isWaiting).map((o) => o.server)).toEqual(['memory', 'everything', 'cluster']);
  });

  it('a server that failed for another reason keeps its own section', () => {
    expect(waitingServers(offers, servers).some((w) => w.server === 'broken')).toBe(false);
  });

  it('a search keeps the servers whose name or command matches', () => {
    expect(waitingServers(offers, servers, 'mem').map((w) => w.server)).toEqual(['memory']);
    expect(waitingServers(offers, servers, 'server-everything').map((w) => w.server)).toEqual(['everything']);
    expect(waitingServers(offers, servers, 'nothing-like-it')).toEqual([]);
  });

  it('a server listed before is not in the group: its last listing shows, marked as awaiting approval', () => {
    const remembered: ServerOffer = { ...listed('everything'), error: refused('everything').error, listed_at: '2026-12-07T14:00:00Z' };
    const withMemory = [refused('memory'), remembered];
    expect(waitingServers(withMemory, servers).map((w) => w.server)).toEqual(['memory']);
    expect(withMemory.map((o) => [o.server, isWaiting(o), isRemembered(o), isUnlisted(o)])).toEqual([
      ['memory', true, false, true],
      ['everything', true, true, false],
    ]);
    // Listed now (approved): neither remembered nor in the group.
    expect([isRemembered(listed('echo')), isUnlisted(listed('echo'))]).toEqual([false, false]);
  });

  it('says how many in one title', () => {
    expect(waitingTitle(1)).toBe('1 server waiting for approval');
    expect(waitingTitle(5)).toBe('5 servers waiting for approval');
  });

  it('shortens long absolute paths for the one line, keeping the rest of the command', () => {
    expect(shortCommand('/home/me/repo/target/debug/mcpflow-testkit echo')).toBe('…/target/debug/mcpflow-testkit echo');
    expect(shortCommand('node /r/node_modules/@modelcontextprotocol/server-memory/dist/index.js (cwd: /tmp)')).toBe(
      'node …/server-memory/dist/index.js (cwd: /tmp)',
    );
    expect(shortCommand("node '/srv/x/index.js' stdio")).toBe("node '/srv/x/index.js' stdio");
    expect(shortCommand('uvx mcp-server-time')).toBe('uvx mcp-server-time');
  });
});
