// speedscope.mjs TRACE.json EXPECTED.json OUTDIR — load a trace in speedscope
// (served from node_modules over a local HTTP server) in headless Chromium,
// screenshot the flame chart, and check the slices speedscope imported: for
// every thread, each slice name with its count and total duration.  The
// counts come from speedscope's own export of what it parsed; the names are
// also read back from the rendered sandwich table.  Prints one line per check
// and exits 1 if any failed.
import { createServer } from 'node:http';
import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import { join, extname, dirname } from 'node:path';
import { createRequire } from 'node:module';

const [tracePath, expectedPath, outDir] = process.argv.slice(2);
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
  '.json': 'application/json', '.wasm': 'application/wasm', '.woff2': 'font/woff2' };
const server = createServer((req, res) => {
  const path = decodeURIComponent(req.url.split('?')[0]);
  const file = path === '/trace.json' ? tracePath : join(dist, path === '/' ? 'index.html' : path);
  if (!file.startsWith(dist) && file !== tracePath || !existsSync(file)) {
    res.writeHead(404); res.end(); return;
  }
  res.writeHead(200, { 'content-type': types[extname(file)] || 'application/octet-stream' });
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
  await page.goto(`http://127.0.0.1:${port}/index.html#profileURL=/trace.json`);
  // once the import succeeded the toolbar names the profile: "... (pid N)" or
  // "... (tid N)", with "(1/N)" beside it when there are several threads
  await page.waitForFunction(() => /\((pid|tid) \d+\)/.test(document.body.innerText), null,
    { timeout: 30000 });
  await page.waitForTimeout(1000);
  await page.screenshot({ path: join(outDir, 'speedscope-time-order.png') });
  check(errors.length === 0, `no page errors ${errors.join('; ')}`);

  // speedscope's export: exactly what it parsed, one profile per thread
  const [download] = await Promise.all([
    page.waitForEvent('download', { timeout: 10000 }),
    page.getByText('Export', { exact: false }).first().click(),
  ]);
  const exportPath = join(outDir, 'speedscope-export.json');
  await download.saveAs(exportPath);
  const exp = JSON.parse(readFileSync(exportPath, 'utf8'));
  const frames = exp.shared.frames.map((f) => f.name);
  const byThread = {};
  for (const p of exp.profiles) {
    const stats = {};
    const open = [];
    for (const ev of p.events) {
      // speedscope appends a slice's args to its frame name: "Name {...}"
      const name = frames[ev.frame].split(' {')[0];
      if (ev.type === 'O') open.push(ev.at);
      else {
        const s = stats[name] || (stats[name] = { count: 0, total: 0 });
        s.count++;
        s.total += ev.at - open.pop();
      }
    }
    byThread[p.name] = { stats, unit: p.unit };
  }
  for (const [thread, slices] of Object.entries(expected.threads)) {
    const key = Object.keys(byThread).find((n) => n.includes(thread));
    check(key !== undefined, `thread ${thread} imported (profiles: ${Object.keys(byThread).join(', ')})`);
    if (!key) continue;
    const got = byThread[key];
    const toMs = { microseconds: 1e-3, milliseconds: 1, nanoseconds: 1e-6 }[got.unit] ?? NaN;
    check(Object.keys(got.stats).length === Object.keys(slices).length,
      `${thread}: ${Object.keys(got.stats).length} distinct slices (want ${Object.keys(slices).length})`);
    for (const [name, want] of Object.entries(slices)) {
      const s = got.stats[name];
      check(s && s.count === want.count, `${thread}: ${name} x${s ? s.count : 0} (want ${want.count})`);
      check(s && Math.abs(s.total * toMs - want.total_ms) < 0.01,
        `${thread}: ${name} total ${s ? (s.total * toMs).toFixed(3) : '-'} ms (want ${want.total_ms})`);
    }
  }

  // the rendered sandwich table of the first thread names its slices
  await page.keyboard.press('3');
  await page.waitForTimeout(500);
  await page.screenshot({ path: join(outDir, 'speedscope-sandwich.png') });
  const text = await page.evaluate(() => document.body.innerText);
  const first = Object.values(expected.threads)[0];
  for (const name of Object.keys(first))
    check(text.includes(name), `sandwich view shows ${name}`);
  // back to the flame chart for the screenshot people look at
  await page.keyboard.press('1');
  await page.waitForTimeout(500);
  await page.screenshot({ path: join(outDir, 'speedscope-time-order.png') });
} catch (e) {
  check(false, `exception: ${e.stack || e}`);
} finally {
  await browser.close();
  server.close();
}
console.log(`viewer: ${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
