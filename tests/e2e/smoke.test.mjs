// The studio opens on first start with the demo blueprint on the canvas.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openStudio, shown, until } from './harness.mjs';

test('first start seeds the store and opens the demo blueprint on the canvas', async () => {
  const studio = await openStudio('smoke');
  const { browser } = studio;
  try {
    await shown(browser, '.react-flow__node');
    // cmdb-sync-sketch: the demo. Its first step is on the canvas.
    const nodes = await until(async () => {
      const found = await browser.$$('.react-flow__node');
      return found.length >= 5 ? found.length : 0;
    }, 'the demo blueprint nodes');
    assert.ok(nodes >= 5, `expected the demo's steps on the canvas, saw ${nodes}`);
    const title = await browser.getTitle();
    assert.match(title, /mcpflow/);
    await studio.shot('demo-open');
  } finally {
    await studio.close();
  }
});
