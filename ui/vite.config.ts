/// <reference types="vitest/config" />
// The studio's UI: Vite (dev server and build) and Vitest (unit tests), rooted at ui/.
import react from '@vitejs/plugin-react';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const ui = fileURLToPath(new URL('.', import.meta.url));
const repo = fileURLToPath(new URL('..', import.meta.url));

export default defineConfig({
  root: ui,
  base: './',
  plugins: [react()],
  // The demo document is imported from ../workflows.
  server: { host: '127.0.0.1', port: 1420, strictPort: true, fs: { allow: [repo] } },
  preview: { host: '127.0.0.1', port: 1420, strictPort: true },
  clearScreen: false,
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    // The desktop's CSP has no 'unsafe-eval'; keep source maps out of the shipped bundle.
    sourcemap: false,
    chunkSizeWarningLimit: 2500,
  },
  test: {
    root: ui,
    include: ['src/**/*.test.ts', 'src/**/*.test.tsx'],
    environment: 'node',
    // The machines that run CI are shared and often busy: a test that renders every
    // example takes seconds there. Timings are measured by benchmarks, not by tests.
    testTimeout: 60_000,
  },
});
