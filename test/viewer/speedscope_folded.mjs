// speedscope_folded.mjs STACKS.folded EXPECTED.json OUTDIR — load a folded-stacks
// file (uprobestats run --stacks) in speedscope in headless Chromium, export
// what speedscope parsed, and check it: every expected stack (root first) is
// a sampled stack with its weight, and the total weight.  Prints one line per
// check and "viewer: N passed, N failed".
import { createServer } from 'node:http';
import { readFileSync, existsSync } from 'node:fs';
import { join, extname, dirname } from 'node:path';
import { createRequire } from 'node:module';

const [foldedPath, expectedPath, outDir] = process.argv.slice(2);
const require = createRequire(join(outDir, 'package.json'));
const { chromium } = require('playwright-core');
const dist = join(dirname(require.resolve('speedscope/package.json')), 'dist', 'release');
const expected = JSON.parse(readFileSync(expectedPath, 'utf8'));

let passed = 0, failed = 0;
function check(ok, what) {
  if (ok) passed++; else failed++;
  console.log(`${ok ? 'ok  ' : 'FAIL'} viewer ${what}`);
}

const types = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css',
  '.wasm': 'application/wasm', '.woff2': 'font/woff2', '.txt': 'text/plain' };
const server = createServer((req, res) => {
  const path = decodeURIComponent(req.url.split('?')[0]);
  const file = path === '/stacks.txt' ? foldedPath : join(dist, path === '/' ? 'index.html' : path);
  if (!file.startsWith(dist) && file !== foldedPath || !existsSync(file)) {
    res.writeHead(404); res.end(); return;
  }
  res.writeHead(200, { 'content-type': types[extname(file)] || 'text/plain' });
  res.end(readFileSync(file));
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const port = server.address().port;

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
try {
  const page = await browser.newPage({ viewport: { width: 1400, height: 800 }, acceptDownloads: true });
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(`http://127.0.0.1:${port}/index.html#profileURL=/stacks.txt`);
  await page.waitForFunction(() => /stacks\.txt/.test(document.body.innerText), null,
    { timeout: 30000 });
  await page.waitForTimeout(1000);
  await page.screenshot({ path: join(outDir, 'speedscope-stacks.png') });
  check(errors.length === 0, `no page errors ${errors.join('; ')}`);
  const [download] = await Promise.all([
    page.waitForEvent('download', { timeout: 10000 }),
    page.getByText('Export', { exact: false }).first().click(),
  ]);
  const exportPath = join(outDir, 'speedscope-stacks-export.json');
  await download.saveAs(exportPath);
  const exp = JSON.parse(readFileSync(exportPath, 'utf8'));
  const names = exp.shared.frames.map((f) => f.name);
  const p = exp.profiles[0];
  check(p !== undefined, `a profile (${exp.profiles.length})`);
  // speedscope exports folded input as an evented profile laid out sample
  // after sample: the time spent with the full stack X open is X's weight.
  const got = {};
  let total = 0;
  if (p.type === 'sampled') {
    p.samples.forEach((s, i) => {
      const key = s.map((f) => names[f]).join(';');
      got[key] = (got[key] || 0) + p.weights[i];
      total += p.weights[i];
    });
  } else {
    const open = [];
    let prev = p.startValue;
    for (const ev of p.events) {
      if (open.length && ev.at > prev) {
        const key = open.map((f) => names[f]).join(';');
        got[key] = (got[key] || 0) + (ev.at - prev);
        total += ev.at - prev;
      }
      prev = ev.at;
      if (ev.type === 'O') open.push(ev.frame); else open.pop();
    }
  }
  for (const [stack, weight] of Object.entries(expected.stacks)) {
    const key = Object.keys(got).find((k) => k === stack || k.endsWith(';' + stack));
    check(key !== undefined && got[key] === weight,
      `stack ${stack} weight ${key ? got[key] : 0} (want ${weight})`);
  }
  check(total === expected.total, `total weight ${total} (want ${expected.total})`);
} catch (e) {
  check(false, `exception: ${e.stack || e}`);
} finally {
  await browser.close();
  server.close();
}
console.log(`viewer: ${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
