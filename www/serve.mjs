// A tiny static file server for the demo page (and the Vite test's build output), bound
// to 127.0.0.1 only. Serves `root`; when `pkgDir` is given, /pkg/* comes from that package
// directory instead of root/pkg (so the page can run against any built or installed copy
// of the package without copying it).
//
//   node www/serve.mjs [--port 8080] [--root www] [--pkg pkg]
//
// No dependencies; .wasm is served as application/wasm so that
// WebAssembly.instantiateStreaming works.
import { createServer } from "node:http";
import { createReadStream, statSync, existsSync } from "node:fs";
import { resolve, join, extname, sep } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

export const MIME = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json; charset=utf-8",
  ".wasm": "application/wasm",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".map": "application/json; charset=utf-8",
  ".ts": "text/plain; charset=utf-8",
  ".md": "text/plain; charset=utf-8",
  ".txt": "text/plain; charset=utf-8",
};

/** The file under `base` that `rel` names, or null when it escapes `base`. */
function inside(base, rel) {
  const full = resolve(base, "." + sep + rel);
  return full === base || full.startsWith(base + sep) ? full : null;
}

/**
 * Starts serving; resolves to `{ url, port, close() }`. `port: 0` picks a free port.
 */
export function startServer({ root, pkgDir, port = 0, host = "127.0.0.1", log = false } = {}) {
  const rootDir = resolve(root ?? fileURLToPath(new URL(".", import.meta.url)));
  const pkg = pkgDir ? resolve(pkgDir) : null;
  const server = createServer((req, res) => {
    let pathname;
    try {
      pathname = decodeURIComponent(new URL(req.url, "http://x").pathname);
    } catch {
      res.writeHead(400).end("bad request");
      return;
    }
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.writeHead(405, { allow: "GET, HEAD" }).end();
      return;
    }
    let file;
    if (pkg && (pathname === "/pkg" || pathname.startsWith("/pkg/"))) {
      file = inside(pkg, pathname.slice(4));
    } else {
      file = inside(rootDir, pathname);
    }
    if (file && existsSync(file) && statSync(file).isDirectory()) file = join(file, "index.html");
    if (!file || !existsSync(file) || !statSync(file).isFile()) {
      if (log) console.log(`404 ${pathname}`);
      res.writeHead(404, { "content-type": "text/plain; charset=utf-8" }).end(`not found: ${pathname}\n`);
      return;
    }
    const type = MIME[extname(file).toLowerCase()] ?? "application/octet-stream";
    res.writeHead(200, {
      "content-type": type,
      "content-length": statSync(file).size,
      "cache-control": "no-store",
      "x-content-type-options": "nosniff",
    });
    if (log) console.log(`200 ${pathname} (${type})`);
    if (req.method === "HEAD") return res.end();
    createReadStream(file).pipe(res);
  });
  return new Promise((ok, fail) => {
    server.once("error", fail);
    server.listen(port, host, () => {
      const actual = server.address().port;
      ok({
        url: `http://${host}:${actual}/`,
        port: actual,
        close: () => new Promise((done) => {
          server.closeAllConnections?.();
          server.close(() => done());
        }),
      });
    });
  });
}

// CLI
if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const args = process.argv.slice(2);
  const opt = (name, fallback) => {
    const i = args.indexOf(`--${name}`);
    return i >= 0 ? args[i + 1] : fallback;
  };
  const here = fileURLToPath(new URL(".", import.meta.url));
  const root = opt("root", here);
  let pkgDir = opt("pkg", process.env.CHR_PKG);
  if (!pkgDir && !existsSync(join(root, "pkg"))) pkgDir = resolve(here, "..", "pkg");
  const { url } = await startServer({ root, pkgDir, port: Number(opt("port", 8080)), log: true });
  console.log(`serving ${resolve(root)}${pkgDir ? ` (and /pkg/ from ${resolve(pkgDir)})` : ""} at ${url}`);
  console.log("Ctrl-C to stop");
}
