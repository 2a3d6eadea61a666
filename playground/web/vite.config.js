// Builds the playground into ../dist, which the Go package embeds. Every
// asset is local and served under /playground/: the page loads nothing from
// the internet.
import { defineConfig } from 'vite';

export default defineConfig({
  base: '/playground/',
  build: {
    outDir: '../dist',
    emptyOutDir: true,
    assetsDir: 'assets',
    sourcemap: false,
    chunkSizeWarningLimit: 8000,
    // Inline nothing as data: URIs beyond small images; fonts ship inside CSS.
    assetsInlineLimit: 4096,
  },
  worker: {
    format: 'es',
  },
  esbuild: {
    jsx: 'automatic',
  },
});
