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
    // Only small files become data: URIs; fonts already ship inside the CSS.
    assetsInlineLimit: 4096,
    rollupOptions: {
      onwarn(warning, warn) {
        // framer-motion (a GraphiQL dependency) marks modules "use client",
        // which means nothing in a browser bundle.
        if (warning.code === 'MODULE_LEVEL_DIRECTIVE') return;
        warn(warning);
      },
    },
  },
  worker: {
    format: 'es',
  },
  esbuild: {
    jsx: 'automatic',
  },
});
