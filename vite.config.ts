/**
 * Builds the checkout widget (widget/crypto-checkout.ts) into one minified
 * ES module, dist/widget/crypto-checkout.js, served at /widget/crypto-checkout.js.
 */
import { defineConfig } from 'vite';

export default defineConfig({
  build: {
    outDir: 'dist/widget',
    emptyOutDir: true,
    target: 'es2022',
    minify: true,
    lib: {
      entry: 'widget/crypto-checkout.ts',
      formats: ['es'],
      fileName: () => 'crypto-checkout.js',
    },
    // Library mode keeps whitespace for ES output; minify the bundle itself so the served file is small.
    rolldownOptions: { output: { minify: true } },
  },
});
