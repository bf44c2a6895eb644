import { describe, expect, it } from 'vitest';
import { startedBy } from './started-by';

describe('startedBy', () => {
  it('names the studio, the CLI and a schedule', () => {
    expect(startedBy({ trigger: 'studio', client: null })).toBe('studio');
    expect(startedBy({ trigger: 'cli' })).toBe('CLI');
    expect(startedBy({ trigger: 'schedule', client: null })).toBe('schedule');
  });

  it('names an MCP run by its client, or says an MCP host when it has none', () => {
    expect(startedBy({ trigger: 'mcp', client: 'claude-ai' })).toBe('claude-ai (MCP)');
    expect(startedBy({ trigger: 'mcp', client: '  ' })).toBe('an MCP host');
    expect(startedBy({ trigger: 'mcp', client: null })).toBe('an MCP host');
  });

  it('shows a trigger it does not know as it is', () => {
    expect(startedBy({ trigger: 'webhook' })).toBe('webhook');
    expect(startedBy({ trigger: '' })).toBe('unknown');
  });
});
