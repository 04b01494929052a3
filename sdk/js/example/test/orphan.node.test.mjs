// The orphan test: a test process (orphan-victim.mjs, a node:test file run as
// its own process) starts a server through the fixture and blocks; it is
// killed with SIGKILL mid-test; its retsu (found by its unique --data-dir in
// /proc/*/cmdline) must be gone within 2 s.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { pidsWith } from '../suite.mjs';

const victim = fileURLToPath(new URL('../orphan-victim.mjs', import.meta.url));
const sleep = (ms) => new Promise((res) => setTimeout(res, ms));

function retsuPidsOf(dataDir) {
  // The victim's own command line names dataDir too, but not after --data-dir.
  return pidsWith(`--data-dir\0${dataDir}\0`);
}

test('SIGKILL of the test process mid-test leaves no retsu behind after 2 s', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'retsu-js-orphan-'));
  const child = spawn(process.execPath, [victim, dataDir], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stderr.on('data', (d) => { err += d; });
  const exited = new Promise((res) => child.on('exit', (code, signal) => res({ code, signal })));
  try {
    await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the victim did not get ready in 20 s:\n${out}\n${err}`)), 20000);
      child.stdout.on('data', (d) => {
        out += d;
        if (/VICTIM READY \d+/.test(out)) { clearTimeout(timer); resolve(); }
      });
      child.on('exit', () => { clearTimeout(timer); reject(new Error(`the victim exited early:\n${out}\n${err}`)); });
    });
    const retsuPid = Number(out.match(/VICTIM READY (\d+)/)[1]);
    assert.deepEqual(retsuPidsOf(dataDir), [retsuPid], 'the victim\'s retsu runs before the kill');

    child.kill('SIGKILL');
    assert.deepEqual(await exited, { code: null, signal: 'SIGKILL' });
    const killedAt = Date.now();
    while (retsuPidsOf(dataDir).length && Date.now() - killedAt < 2000) await sleep(20);
    const left = retsuPidsOf(dataDir);
    for (const pid of left) process.kill(pid, 'SIGKILL');
    assert.deepEqual(left, [], 'retsu processes of the killed run still alive 2 s after SIGKILL');
    console.log(`# retsu ${retsuPid} gone ${Date.now() - killedAt} ms after the SIGKILL of its test process`);
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  }
});
