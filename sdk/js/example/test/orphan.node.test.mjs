// Orphan tests: a test process starts a server through the fixture and
// blocks; it (or its runner) is killed with SIGKILL mid-test; no retsu of that
// run (found by its unique --data-dir in /proc/*/cmdline) may remain after 2 s.
//  1. the test process itself: node orphan-victim.mjs (its stdin pipe to retsu closes)
//  2. the runner of node --test, whose file process is left orphaned
//  3. Vitest's main process, whose fork worker is left orphaned
// (in 2 and 3 the fixture sees its parent die and stops its server).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { alive, pidsWith } from '../suite.mjs';

const here = (p) => fileURLToPath(new URL(p, import.meta.url));
const sleep = (ms) => new Promise((res) => setTimeout(res, ms));

async function orphanCheck(t, argv) {
  const dir = mkdtempSync(join(tmpdir(), 'retsu-js-orphan-'));
  const dataDir = join(dir, 'data');
  const ready = join(dir, 'ready');
  // The victim's own command line names nothing of dataDir; retsu's has --data-dir DIR.
  const retsuPids = () => pidsWith(`--data-dir\0${dataDir}\0`);
  // Not a child of this run's node:test runner: its own process tree.
  const env = { ...process.env, VICTIM_DIR: dataDir, VICTIM_READY: ready };
  delete env.NODE_TEST_CONTEXT;
  const child = spawn(process.execPath, argv, {
    cwd: here('..'),
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d) => { output += d; });
  child.stderr.on('data', (d) => { output += d; });
  const exited = new Promise((res) => child.on('exit', (code, signal) => res({ code, signal })));
  let testPid = null;
  try {
    const deadline = Date.now() + 30000;
    while (!existsSync(ready) || !readFileSync(ready, 'utf8').endsWith('\n')) {
      if (child.exitCode !== null) throw new Error(`the victim exited early:\n${output}`);
      if (Date.now() > deadline) throw new Error(`the victim did not get ready in 30 s:\n${output}`);
      await sleep(25);
    }
    const [retsuPid, victimPid] = readFileSync(ready, 'utf8').trim().split(' ').map(Number);
    testPid = victimPid;
    assert.deepEqual(retsuPids(), [retsuPid], 'the victim\'s retsu runs before the kill');

    child.kill('SIGKILL');
    assert.deepEqual(await exited, { code: null, signal: 'SIGKILL' });
    const killedAt = Date.now();
    while (retsuPids().length && Date.now() - killedAt < 2000) await sleep(20);
    const left = retsuPids();
    for (const pid of left) process.kill(pid, 'SIGKILL');
    assert.deepEqual(left, [], 'retsu processes of the killed run still alive 2 s after SIGKILL');
    t.diagnostic(`retsu ${retsuPid} gone ${Date.now() - killedAt} ms after the SIGKILL of ${child.pid}` +
      (victimPid !== child.pid ? ` (the orphaned test process ${victimPid} was ${alive(victimPid) ? 'still alive' : 'gone'})` : ''));
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    if (testPid && testPid !== child.pid && alive(testPid)) process.kill(testPid, 'SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
}

test('orphan: SIGKILL of the test process mid-test leaves no retsu behind after 2 s', (t) =>
  orphanCheck(t, [here('../orphan-victim.mjs')]));

test('orphan: SIGKILL of the node --test runner mid-test leaves no retsu behind after 2 s', (t) =>
  orphanCheck(t, ['--test', here('../orphan-victim.mjs')]));

test('orphan: SIGKILL of the Vitest process mid-test leaves no retsu behind after 2 s', (t) =>
  orphanCheck(t, [here('../node_modules/vitest/vitest.mjs'), 'run', '--config', here('../orphan.vitest.config.mjs')]));
