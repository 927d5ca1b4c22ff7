// 5d. A list of any size: 600,000 prompts of 1 KB (about 620 MB), made up by the sandbox as it sends them, read by
// the client in a process of its own that keeps nothing (its peak RSS is the list reader's own cost).
import { spawn, spawnSync } from 'node:child_process';
import { builtModule, say } from './processes.mjs';

export const names = ['list'];

export async function measure() {
  const figures = {};
  say('5d. list: 600,000 prompts of 1 KB (about 620 MB), streamed to a sink that keeps nothing');
  const server = spawn(process.execPath, ['-e', `require(${JSON.stringify(builtModule('sandbox', 'server.js'))}).startSandbox({ port: 0, generatedList: { evaluationId: 11, traces: 600000, promptBytes: 1000 } }).then((s) => console.log(JSON.stringify({ baseUrl: s.baseUrl, token: s.token })))`], { stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    const sb = await new Promise((resolve, reject) => {
      let text = '';
      server.stdout.on('data', (c) => {
        text += c;
        if (text.includes('\n')) resolve(JSON.parse(text.slice(0, text.indexOf('\n'))));
      });
      server.on('exit', (code) => reject(new Error(`sandbox exited ${code}`)));
    });
    const reader = `const { createApiClient } = require(${JSON.stringify(builtModule('api', 'client.js'))});
      const c = createApiClient({ baseUrl: process.env.B, token: process.env.T });
      const t0 = performance.now();
      let count = 0, batches = 0;
      c.streamPrompts('benchmark', 11, (b) => { count += b.length; batches++; return Promise.resolve(); })
        .then(async (r) => { const ms = performance.now() - t0; await c.close(); console.log(JSON.stringify({ count, batches, ms, peakRssMB: process.resourceUsage().maxRSS / 1024 })); });`;
    const r = spawnSync(process.execPath, ['-e', reader], { encoding: 'utf8', env: { ...process.env, B: sb.baseUrl, T: sb.token } });
    if (r.status !== 0) throw new Error(`the list reader failed: ${r.stderr}`);
    figures.list = JSON.parse(r.stdout.trim().split('\n').pop() ?? '');
  } finally {
    server.kill('SIGTERM');
  }
  return figures;
}
