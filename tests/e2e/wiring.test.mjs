// Wiring is what you see, on the real app: two tools dropped onto a new document land
// where they were dropped, apart, unconnected, and the zoom stays; a hand-written
// blueprint's implicit edges (list order) are dashed, and a click on one makes it
// explicit (solid, and written into `after`); auto-layout of a blueprint with a loop
// whose body depends on an outside step routes every edge around the loop box and the
// cards, and fits the view (never past 100%).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { click, dragToCanvas, importDoc, openStudio, sel, shown, standsStill, until, viewportZoom } from './harness.mjs';


async function paneRect(browser) {
  return browser.execute(() => {
    const r = document.querySelector('.react-flow__pane').getBoundingClientRect();
    return { x: r.left, y: r.top, w: r.width, h: r.height };
  });
}

/** Screen boxes of the step nodes, by step id. */
async function nodeBoxes(browser) {
  return browser.execute(() => {
    const out = {};
    for (const n of document.querySelectorAll('.react-flow__node')) {
      const r = n.getBoundingClientRect();
      out[n.dataset.id] = { x: r.left, y: r.top, w: r.width, h: r.height, loop: n.classList.contains('react-flow__node-loop') };
    }
    return out;
  });
}

/** The document as exported (the test dialog writes it to `dialogPath`). */
async function exported(studio) {
  rmSync(studio.dialogPath, { force: true });
  await click(studio.browser, sel('file-export'));
  await until(() => existsSync(studio.dialogPath), 'the exported file');
  return JSON.parse(readFileSync(studio.dialogPath, 'utf8'));
}

/**
 * Every edge's path sampled every few pixels, in screen coordinates, with its ends.
 * Path coordinates are canvas coordinates: they are placed on screen with the viewport's
 * zoom and the screen origin of the canvas, measured on a node (its transform is its
 * canvas position).
 */
async function edgeSamples(browser) {
  return browser.execute(() => {
    const zoom = Number(/scale\(([\d.]+)\)/.exec(document.querySelector('.react-flow__viewport').style.transform)[1]);
    const ref = document.querySelector('.react-flow__node');
    const [nx, ny] = /translate\(([-\d.]+)px, ([-\d.]+)px\)/.exec(ref.style.transform).slice(1).map(Number);
    const rr = ref.getBoundingClientRect();
    const origin = { x: rr.left - zoom * nx, y: rr.top - zoom * ny };
    const out = [];
    for (const g of document.querySelectorAll('.react-flow__edge')) {
      const path = g.querySelector('path.react-flow__edge-path');
      if (!path) continue;
      const id = g.dataset.testid.replace(/^rf__edge-/, '');
      const m = /^(?:after|fallback):(.+)->(.+)$|^case:(.+):[^:]+->(.+)$/.exec(id);
      const total = path.getTotalLength();
      const points = [];
      for (let l = 0; l <= total; l += 4) {
        const p = path.getPointAtLength(l);
        points.push({ x: origin.x + zoom * p.x, y: origin.y + zoom * p.y });
      }
      out.push({ id, source: m?.[1] ?? m?.[3], target: m?.[2] ?? m?.[4], points, dashed: getComputedStyle(path).strokeDasharray });
    }
    return out;
  });
}

/** A real pointer click in the middle of an edge's path (on its stroke, checked in the page first). */
async function clickEdge(browser, edgeId) {
  const at = await until(
    () =>
      browser.execute((id) => {
        const g = document.querySelector(`[data-testid="rf__edge-${id}"]`);
        const path = g?.querySelector('path.react-flow__edge-path');
        if (!path) return null;
        // Canvas → screen as in `edgeSamples` (getScreenCTM misses the viewport's CSS zoom in WebKit).
        const zoom = Number(/scale\(([\d.]+)\)/.exec(document.querySelector('.react-flow__viewport').style.transform)[1]);
        const ref = document.querySelector('.react-flow__node');
        const [nx, ny] = /translate\(([-\d.]+)px, ([-\d.]+)px\)/.exec(ref.style.transform).slice(1).map(Number);
        const rr = ref.getBoundingClientRect();
        const p = path.getPointAtLength(path.getTotalLength() / 2);
        const x = Math.round(rr.left - zoom * nx + zoom * p.x);
        const y = Math.round(rr.top - zoom * ny + zoom * p.y);
        return g.contains(document.elementFromPoint(x, y)) ? { x, y } : null;
      }, edgeId),
    `the middle of edge ${edgeId} under the pointer`,
  );
  await browser.performActions([
    {
      type: 'pointer',
      id: 'mouse',
      parameters: { pointerType: 'mouse' },
      actions: [
        { type: 'pointerMove', duration: 0, x: at.x, y: at.y },
        { type: 'pointerDown', button: 0 },
        { type: 'pointerUp', button: 0 },
      ],
    },
  ]);
  await browser.releaseActions();
}

test('drops land at their points, apart and unconnected, at the same zoom', async () => {
  const studio = await openStudio('wiring-drop');
  const { browser } = studio;
  try {
    await shown(browser, '.react-flow__node');
    await click(browser, sel('file-new'));
    const ask = await browser.$(sel('ask-confirm'));
    if (await ask.waitForDisplayed({ timeout: 2_000 }).then(() => true, () => false)) await ask.click();
    await until(async () => (await browser.$$('.react-flow__node')).length === 0, 'an empty new document');
    await standsStill(browser);
    const z0 = await viewportZoom(browser);
    const pane = await paneRect(browser);
    const points = [
      { x: Math.round(pane.x + pane.w * 0.3), y: Math.round(pane.y + pane.h * 0.35) },
      { x: Math.round(pane.x + pane.w * 0.62), y: Math.round(pane.y + pane.h * 0.6) },
    ];
    for (const p of points) {
      assert.equal(await dragToCanvas(browser, sel('palette-item-kind-tool'), p.x, p.y), 'ok');
      await standsStill(browser);
    }
    await until(async () => Object.keys(await nodeBoxes(browser)).length === 2, 'two steps on the canvas');
    await standsStill(browser);
    await studio.shot('two-drops');

    const boxes = Object.entries(await nodeBoxes(browser));
    boxes.sort((a, b) => a[1].x - b[1].x);
    // Each card is where it was dropped: the drop point lies on the card's top part.
    boxes.forEach(([id, b], i) => {
      const p = points[i];
      assert.ok(p.x > b.x && p.x < b.x + b.w && p.y > b.y && p.y < b.y + b.h, `${id} at ${JSON.stringify(b)} holds its drop point ${JSON.stringify(p)}`);
    });
    const [[, a], [, b]] = boxes;
    const apart = a.x + a.w <= b.x || b.x + b.w <= a.x || a.y + a.h <= b.y || b.y + b.h <= a.y;
    assert.ok(apart, `the two cards do not overlap: ${JSON.stringify(boxes)}`);
    // No edge: the second is not wired to the first by list order.
    assert.equal((await browser.$$('.react-flow__edge')).length, 0, 'no edge between the two dropped steps');
    assert.equal(await viewportZoom(browser), z0, `the zoom stays ${z0}`);

    const doc = await exported(studio);
    assert.equal(doc.steps.length, 2);
    assert.deepEqual(doc.steps[1].after, [], `the second step is written unconnected: ${JSON.stringify(doc.steps[1])}`);

    // A third drop right on top of the first card is nudged off it.
    const onFirst = { x: Math.round(a.x + a.w / 2), y: Math.round(a.y + 10) };
    assert.equal(await dragToCanvas(browser, sel('palette-item-kind-tool'), onFirst.x, onFirst.y), 'ok');
    await until(async () => Object.keys(await nodeBoxes(browser)).length === 3, 'three steps on the canvas');
    await standsStill(browser);
    const three = Object.values(await nodeBoxes(browser));
    for (let i = 0; i < three.length; i++) {
      for (let j = i + 1; j < three.length; j++) {
        const [p, q] = [three[i], three[j]];
        const sep = p.x + p.w <= q.x || q.x + q.w <= p.x || p.y + p.h <= q.y || q.y + q.h <= p.y;
        assert.ok(sep, `cards ${i} and ${j} do not overlap: ${JSON.stringify(three)}`);
      }
    }
    await studio.shot('third-drop-nudged');

    // From the palette (double-click, no point): right of the selected step, unconnected.
    await (await shown(browser, sel('step-tool_2'))).click();
    await until(async () => (await browser.$(sel('step-tool_2')).getAttribute('class'))?.includes('selected') || (await browser.$('.react-flow__node.selected').isExisting()), 'tool_2 selected');
    await (await shown(browser, sel('palette-item-kind-transform'))).doubleClick();
    await shown(browser, sel('step-transform'));
    await standsStill(browser);
    const all = await nodeBoxes(browser);
    const [t2, tr] = [all.tool_2, all.transform];
    assert.ok(tr.x >= t2.x + t2.w, `the palette step is right of the selected one: ${JSON.stringify({ t2, tr })}`);
    assert.ok(Math.abs(tr.y - t2.y) < 2, `…at the same height: ${JSON.stringify({ t2, tr })}`);
    assert.equal((await browser.$$('.react-flow__edge')).length, 0, 'still no edge');
    await studio.shot('palette-next-to-selected');
  } finally {
    await studio.close();
  }
});

test('implicit edges are dashed; a click makes one explicit', async () => {
  const studio = await openStudio('wiring-implicit');
  const { browser } = studio;
  try {
    await shown(browser, '.react-flow__node');
    // Hand-written: `b` and `c` follow the step before them (no `after`); `d` says it.
    await importDoc(studio, {
      blueprint: 1,
      id: 'hand-written',
      name: 'Hand-written',
      steps: [
        { id: 'a', kind: 'transform', value: 1 },
        { id: 'b', kind: 'transform', value: '{{ a }}' },
        { id: 'c', kind: 'transform', value: '{{ b }}' },
        { id: 'd', kind: 'transform', after: ['c'], value: '{{ c }}' },
      ],
      layout: { a: { x: 0, y: 0 }, b: { x: 360, y: 0 }, c: { x: 720, y: 0 }, d: { x: 1080, y: 0 } },
    });
    await shown(browser, sel('rf__edge-after:a->b'));
    await standsStill(browser);
    const dash = async (id) => (await edgeSamples(browser)).find((e) => e.id === id)?.dashed;
    assert.notEqual(await dash('after:a->b'), 'none', 'the implicit edge a → b is dashed');
    assert.notEqual(await dash('after:b->c'), 'none', 'the implicit edge b → c is dashed');
    assert.equal(await dash('after:c->d'), 'none', 'the written edge c → d is solid');
    await studio.shot('implicit-dashed');

    await clickEdge(browser, 'after:a->b');
    await shown(browser, sel('edge-menu'));
    await studio.shot('edge-menu');
    await click(browser, sel('edge-make-explicit'));
    await until(async () => (await dash('after:a->b')) === 'none', 'the edge a → b to turn solid');
    assert.equal(await browser.$(sel('edge-menu')).isExisting(), false, 'the menu closed');
    await studio.shot('made-explicit');
    const doc = await exported(studio);
    assert.deepEqual(doc.steps.find((s) => s.id === 'b').after, ['a'], 'b.after is written');
    assert.equal('after' in doc.steps.find((s) => s.id === 'c'), false, 'c is left as it was');

    // The keyboard: focus the edge b → c, Enter selects it, Enter opens the menu, Escape closes it.
    await browser.execute(() => document.querySelector('[data-testid="rf__edge-after:b->c"]').focus());
    await browser.keys(['Enter']);
    await until(async () => (await browser.$(sel('rf__edge-after:b->c')).getAttribute('class')).includes('selected'), 'b → c selected');
    await browser.keys(['Enter']);
    await shown(browser, sel('edge-menu'));
    await browser.keys(['Escape']);
    await until(async () => !(await browser.$(sel('edge-menu')).isExisting()), 'the menu to close on Escape');

    // "Remove" on the other implicit edge: c no longer waits for b.
    await clickEdge(browser, 'after:b->c');
    await click(browser, sel('edge-remove'));
    await until(async () => !(await browser.$(sel('rf__edge-after:b->c')).isExisting()), 'the edge b → c to go');
    const after = await exported(studio);
    assert.deepEqual(after.steps.find((s) => s.id === 'c').after, []);
  } finally {
    await studio.close();
  }
});

test('auto-layout routes edges around the loop box and cards, and fits the view', async () => {
  const studio = await openStudio('wiring-layout');
  const { browser } = studio;
  try {
    await shown(browser, '.react-flow__node');
    // Laid out badly by hand: the loop sits between `fetch` and the steps after it.
    await importDoc(studio, {
      blueprint: 1,
      id: 'around-the-loop',
      name: 'Around the loop',
      steps: [
        { id: 'fetch', kind: 'transform', value: [1, 2, 3] },
        { id: 'prep', kind: 'transform', value: '{{ fetch }}' },
        {
          id: 'each',
          kind: 'loop',
          for_each: '{{ prep }}',
          steps: [
            { id: 'double', kind: 'transform', value: '{{ item }}' },
            { id: 'label', kind: 'transform', after: ['double', 'fetch'], value: '{{ double }}' },
          ],
        },
        { id: 'side', kind: 'transform', after: ['prep'], value: 1 },
        { id: 'report', kind: 'transform', after: ['each', 'fetch', 'side'], value: '{{ each }}' },
      ],
      layout: {
        fetch: { x: 0, y: 200 },
        prep: { x: 0, y: 0 },
        each: { x: 300, y: 100 },
        side: { x: 1200, y: 600 },
        report: { x: 300, y: 0 },
      },
    });
    await standsStill(browser);
    await studio.shot('before-layout');

    const laidOut = () => browser.execute(() => document.querySelector('.react-flow')?.getAttribute('data-laid-out') ?? null);
    const before = await laidOut();
    await click(browser, sel('auto-layout'));
    // The layout (elkjs, loaded on first use) and the animated fit after it have finished.
    await until(async () => (await laidOut()) !== before, 'the auto-layout and its fit to finish');
    await standsStill(browser);
    await studio.shot('after-layout');

    const z = await viewportZoom(browser);
    assert.ok(z <= 1.0001, `fitted, never past 100%: zoom ${z}`);
    const pane = await paneRect(browser);
    const boxes = await nodeBoxes(browser);
    for (const [id, b] of Object.entries(boxes)) {
      assert.ok(b.x >= pane.x - 1 && b.y >= pane.y - 1 && b.x + b.w <= pane.x + pane.w + 1 && b.y + b.h <= pane.y + pane.h + 1, `${id} is in view after the fit`);
    }
    const loopOf = { double: 'each', label: 'each' };
    const noEdgeThrough = async (when) => {
      const edges = await edgeSamples(browser);
      const boxes = await nodeBoxes(browser);
      assert.ok(edges.some((e) => e.id === 'after:fetch->label'), 'the edge into the loop body is drawn');
      for (const e of edges) {
        const own = new Set([e.source, e.target, loopOf[e.source], loopOf[e.target]]);
        for (const [id, b] of Object.entries(boxes)) {
          if (own.has(id)) continue;
          const inset = 3;
          const inside = e.points.filter((p) => p.x > b.x + inset && p.x < b.x + b.w - inset && p.y > b.y + inset && p.y < b.y + b.h - inset);
          assert.equal(inside.length, 0, `${when}: edge ${e.id} passes through ${b.loop ? 'the loop box' : 'the card'} ${id} (${JSON.stringify(inside[0])})`);
        }
      }
    };
    await noEdgeThrough('after auto-layout');
    // The layout is written into the document, body steps included.
    const doc = await exported(studio);
    assert.ok(doc.layout.label, 'the body steps have a layout entry');

    // Reopened (imported again), the edges still keep out of the loop box and the cards.
    await importDoc(studio, doc);
    await standsStill(browser);
    // The edges are routed once the cards are measured, a few frames after they show.
    await until(() => noEdgeThrough('reopened').then(() => true), 'the reopened edges to route around the cards');
    await studio.shot('reopened');
  } finally {
    await studio.close();
  }
});

test('a dependency cycle is drawn in red, and clicking the problem selects its edge', async () => {
  const studio = await openStudio('wiring-cycle');
  const { browser } = studio;
  try {
    await shown(browser, '.react-flow__node');
    await importDoc(studio, {
      blueprint: 1,
      id: 'round-and-round',
      name: 'Round and round',
      steps: [
        { id: 'start', kind: 'transform', value: 0 },
        { id: 'ping', kind: 'transform', after: ['start', 'pong'], value: 1 },
        { id: 'pong', kind: 'transform', after: ['ping'], value: 2 },
        { id: 'done', kind: 'transform', after: ['pong'], value: 3 },
      ],
      layout: { start: { x: 0, y: 0 }, ping: { x: 340, y: 0 }, pong: { x: 680, y: 120 }, done: { x: 1020, y: 0 } },
    });
    const row = await shown(browser, '[data-testid="diagnostic"][data-code="DEPENDENCY_CYCLE"]');
    const red = async () =>
      browser.execute(() => [...document.querySelectorAll('.react-flow__edge.edge-cycle')].map((g) => g.dataset.id).sort());
    const cycle = await until(async () => {
      const r = await red();
      return r.length ? r : null;
    }, 'red cycle edges');
    // The cycle's edges (the one `after` entry the pointer names, or the whole cycle
    // when the pointer names only a step), and no other edge.
    assert.ok(cycle.every((id) => ['after:pong->ping', 'after:ping->pong'].includes(id)), `red: ${cycle}`);
    assert.ok(!cycle.includes('after:start->ping') && !cycle.includes('after:pong->done'));
    const stroke = await browser.execute(
      (id) => getComputedStyle(document.querySelector(`[data-testid="rf__edge-${id}"] path.react-flow__edge-path`)).stroke,
      cycle[0],
    );
    assert.match(stroke, /rgb\((2[0-9]{2}|1[5-9][0-9]), \d+, \d+\)/, `the cycle edge is red: ${stroke}`);
    await row.click();
    await until(
      async () => browser.execute(() => [...document.querySelectorAll('.react-flow__edge.selected')].map((g) => g.dataset.id)),
      'a selected edge',
    ).then((sel) => assert.ok(cycle.includes(sel[0]), `the selected edge ${sel} is a cycle edge`));
    await studio.shot('cycle');
  } finally {
    await studio.close();
  }
});
