// Vite builds the web UI into internal/webui/dist, which is committed and
// embedded in the Go binary: users never run a build. The page is served at
// / and its files under /ui/ (internal/webui), so every URL in the output
// starts with /ui/. The output has no inline script or style (the server's
// Content-Security-Policy allows only 'self') and no timestamps, so a fresh
// build equals the committed one (internal/webui TestWebDistIsFresh).
import { defineConfig } from "vite";

export default defineConfig({
  base: "/ui/",
  oxc: { jsx: { runtime: "automatic", importSource: "preact" } },
  build: {
    outDir: "../internal/webui/dist",
    emptyOutDir: true,
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    sourcemap: false,
    reportCompressedSize: false,
    chunkSizeWarningLimit: 400,
  },
});
