import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

const here = fileURLToPath(new URL('.', import.meta.url));

/**
 * The console, built into dist/renderer/ and served by the service under /console/
 * (server/console/static.ts). Run from the repository root: vite build --config renderer/vite.config.ts
 */
export default defineConfig({
  root: here,
  base: '/console/',
  plugins: [react()],
  // No public/ folder: the server serves index.html and assets/ only.
  publicDir: false,
  build: {
    outDir: fileURLToPath(new URL('../dist/renderer', import.meta.url)),
    emptyOutDir: true,
    assetsDir: 'assets',
    // Everything is a file under assets/: the CSP allows no inline script, and fonts or images inlined
    // as data: URLs would only save requests on a local service.
    assetsInlineLimit: 0,
    sourcemap: false,
    target: 'es2022',
    // The libraries in chunks of their own, each under Vite's 500 kB warning: a new Courtier
    // version that changes only the console's pages leaves the browser's cached React and zod valid.
    rolldownOptions: {
      output: {
        codeSplitting: {
          groups: [
            { name: 'react', test: /node_modules[\\/](react|react-dom|scheduler)[\\/]/ },
            { name: 'zod', test: /node_modules[\\/]zod[\\/]/ },
          ],
        },
      },
    },
  },
});
