//! Who started a run, in words: `studio`, `CLI`, `schedule`, or the MCP host's client
//! name (`claude-ai (MCP)`; `an MCP host` when it gave none). History's "by" column and
//! the notices of runs started elsewhere use it.

export function startedBy(run: { trigger: string; client?: string | null }): string {
  switch (run.trigger) {
    case 'studio':
      return 'studio';
    case 'cli':
      return 'CLI';
    case 'schedule':
      return 'schedule';
    case 'mcp': {
      const client = run.client?.trim();
      return client ? `${client} (MCP)` : 'an MCP host';
    }
    default:
      return run.trigger || 'unknown';
  }
}
