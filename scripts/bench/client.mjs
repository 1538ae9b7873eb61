// client.mjs drives the echo floor (scripts/bench/echo) and the sidecar
// (bin/hookwire) over real stdio pipes, line framed, the way the OpenCode
// shim does, and times each round trip with process.hrtime.bigint. It has
// no npm dependencies. Run it with `node --expose-gc` (a full GC runs
// before each large request and each small round).
//
//   node --expose-gc client.mjs --mode small|large --echo BIN --hookwire BIN
//        [--histories DIR] [--label TEXT] [--json FILE] [--rounds N] [--calls N]
//
// small: the 500 B tool.execute.before, floor and sidecar alternating
//   round by round (A B A B); each round's p50/p99 ratio, then the medians.
//   The floor echoes the request line back.
// large: chat.messages.transform with the 1 MB and 5 MB histories from
//   gen.mjs in the full form (what a new sidecar gets first), one request
//   per peer per round, alternating; the floor (echo -len) replies only the
//   line's length. Each time includes JSON.stringify of the request, as
//   OpenCode's shim does it. Each round also reads the sidecar's CPU time
//   for its request and Node's for a deep copy of the history
//   (JSON.parse(JSON.stringify(messages))): their median per-round ratio is
//   the full form's CPU figure. Wall time, as OpenCode waits for it, in
//   the same rounds (median of per-round ratios over the deep copy's wall
//   time): the whole history sent as it is (the JSON.stringify of the
//   request to its parsed reply), and the shim's own first request of a
//   new OpenCode process (shim/dist: TransformSync projecting OpenCode's
//   fresh copy, the full form with sync, the reply parsed and taken, the
//   patch applied) to a sidecar started for it on a state database that
//   already holds the session. Beside them, what the wall time is made of:
//   the client's JSON.stringify, the echo -len floor (stringify + pipe),
//   JSON.parse of the reply, and in the shim's request its projection.
//   Then the sidecar's VmRSS/VmHWM a second after the last large request.
// projected: the projected full form of the text-heavy histories
//   (gen.mjs's history-text-*.json, issue 50: a fifth of their bytes text
//   the projection keeps) as the shim sends it on its first request of a
//   session, and as any client without the incremental sync does, to a
//   warm sidecar: shim/dist's TransformSync, new each time, over the
//   shim's own LineConnection, on OpenCode's fresh copy of the history (the
//   projection built, the full form with sync, its JSON and UTF-8, the
//   pipe, the sidecar, the reply parsed and taken, the patch applied), against Node's deep copy of the whole history, alternating
//   round by round (median of per-round ratios). With --hookwire-base and
//   --shim-base (another build's bin/hookwire and shim/dist), that build
//   runs in the same rounds, each round's order rotated, for a before and
//   after in one run. Then each sidecar's VmRSS/VmHWM a second after its
//   last 5 MB request.
//
// Pin it with `taskset -c 1 node ...` for single-CPU figures: the children
// inherit the CPU mask.

import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync, existsSync, readdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { makeHistory, makeTextHeavyHistory, SIZES, GROW_SIZES } from './gen.mjs';

const { values: opt } = parseArgs({
  options: {
    mode: { type: 'string', default: 'small' },
    echo: { type: 'string' },
    hookwire: { type: 'string' },
    histories: { type: 'string' },
    label: { type: 'string', default: '' },
    json: { type: 'string' },
    rounds: { type: 'string' },
    calls: { type: 'string', default: '500' },
    warmup: { type: 'string' },
    state: { type: 'string' },
    'hookwire-base': { type: 'string' },
    'shim-base': { type: 'string' },
  },
});
if (!opt.echo || !opt.hookwire) {
  console.error('client.mjs: --echo and --hookwire are required');
  process.exit(2);
}
if (typeof global.gc !== 'function') {
  console.error('client.mjs: run with node --expose-gc');
  process.exit(2);
}

// Peer is one child process spoken to one line at a time.
class Peer {
  constructor(name, cmd, args) {
    this.name = name;
    this.proc = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    this.pid = this.proc.pid;
    this.chunks = [];
    this.lines = [];
    this.waiter = null;
    this.stderr = '';
    this.nextID = 1;
    this.proc.stdout.on('data', (buf) => this.onData(buf));
    this.proc.stderr.on('data', (buf) => {
      if (this.stderr.length < 1 << 16) this.stderr += buf;
    });
    this.exited = new Promise((resolve) => this.proc.on('exit', (code, sig) => {
      this.exitStatus = sig ?? code;
      if (this.waiter) this.waiter.reject(new Error(`${name} exited (${this.exitStatus}): ${this.stderr.slice(-2000)}`));
      this.waiter = null;
      resolve();
    }));
    this.proc.on('error', (err) => {
      if (this.waiter) this.waiter.reject(err);
      this.waiter = null;
    });
  }

  onData(buf) {
    const t = process.hrtime.bigint();
    let start = 0;
    for (let i = buf.indexOf(10); i >= 0; i = buf.indexOf(10, start)) {
      this.chunks.push(buf.subarray(start, i));
      const line = this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks);
      this.chunks = [];
      start = i + 1;
      if (this.waiter) {
        const w = this.waiter;
        this.waiter = null;
        w.resolve({ line, t });
      } else {
        this.lines.push({ line, t });
      }
    }
    if (start < buf.length) this.chunks.push(buf.subarray(start));
  }

  // roundTrip writes one line (built by make(id), timed) and resolves
  // with the reply and the round trip in nanoseconds.
  roundTrip(make) {
    const id = this.nextID++;
    return new Promise((resolve, reject) => {
      if (this.lines.length) return reject(new Error(`${this.name}: unexpected line ${this.lines[0].line.subarray(0, 200)}`));
      const t0 = process.hrtime.bigint();
      this.waiter = {
        resolve: ({ line, t }) => resolve({ line, ns: Number(t - t0) }),
        reject,
      };
      this.proc.stdin.write(make(id));
    });
  }

  async close() {
    this.proc.stdin.end();
    const timer = setTimeout(() => this.proc.kill('SIGKILL'), 5000);
    await this.exited;
    clearTimeout(timer);
  }

  // cpuNs is the CPU time all the process's threads have run, from
  // schedstat: unlike wall time, other processes' load barely moves it.
  cpuNs() {
    let ns = 0;
    for (const task of readdirSync(`/proc/${this.pid}/task`)) {
      try {
        ns += Number(readFileSync(`/proc/${this.pid}/task/${task}/schedstat`, 'utf8').split(' ')[0]);
      } catch { /* the thread exited */ }
    }
    return ns;
  }

  memory() {
    return memoryOf(this.pid);
  }
}

function memoryOf(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field) => Number((status.match(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm')) || [])[1]);
  return { vmRSSKiB: kb('VmRSS'), vmHWMKiB: kb('VmHWM'), threads: Number((status.match(/^Threads:\s+(\d+)/m) || [])[1]) };
}

const request = (id, method, params) => JSON.stringify({ jsonrpc: '2.0', id, method, params }) + '\n';

function checkResult(peer, line) {
  const reply = JSON.parse(line);
  if (reply.error || !('result' in reply)) {
    throw new Error(`${peer.name}: ${line.subarray(0, 500)}`);
  }
  return reply.result;
}

async function startSidecar(state = opt.state, bin = opt.hookwire) {
  // --state: the sidecar keeps its store in that database, as the shim's
  // always does (PROTOCOL.md 6).
  const side = new Peer('hookwire', bin, ['--log-level', 'warn', ...(state ? ['--state', state] : [])]);
  checkResult(side, (await side.roundTrip((id) => request(id, 'initialize', { protocolVersion: 1 }))).line);
  // ses_b runs the orchestrator, so its task calls are remembered.
  checkResult(side, (await side.roundTrip((id) => request(id, 'chat.message', {
    input: { sessionID: 'ses_b', agent: 'orchestrator' },
    output: { message: { agent: 'orchestrator' } },
  }))).line);
  return side;
}

// The same 500 B request as handlers/transform_bench_test.go's smallCall.
const PAD = 'Look through the repository and list the packages, their responsibilities and how requests flow between them; report file paths.';
const PROMPT = PAD + ' ' + PAD + ' ' + PAD.slice(0, 24);
const smallCall = (callNo) => (id) => request(id, 'tool.execute.before', {
  input: { tool: 'task', sessionID: 'ses_b', callID: `call_${callNo}` },
  output: { args: { description: 'Explore the repo', prompt: PROMPT, subagent_type: 'explorer' } },
});

const sorted = (xs) => Float64Array.from(xs).sort();
// pct is the nearest-rank percentile of sorted values.
const pct = (s, p) => s[Math.max(0, Math.ceil(p * s.length) - 1)];
const median = (xs) => pct(sorted(xs), 0.5);
const us = (ns) => ns / 1e3;
const ms = (ns) => ns / 1e6;

async function small() {
  const rounds = Number(opt.rounds ?? 20);
  const calls = Number(opt.calls);
  const floor = new Peer('echo', opt.echo, []);
  const side = await startSidecar();
  let callNo = 0;
  const cpu = new Map([[floor, 0], [side, 0]]);
  const batch = async (peer, n, check) => {
    const times = [];
    const cpu0 = peer.cpuNs();
    for (let i = 0; i < n; i++) {
      const { line, ns } = await peer.roundTrip(smallCall(++callNo));
      if (check && line.includes('"error":')) throw new Error(`hookwire: ${line.subarray(0, 500)}`);
      times.push(ns);
    }
    cpu.set(peer, cpu.get(peer) + peer.cpuNs() - cpu0);
    return times;
  };
  const size = Buffer.byteLength(smallCall(1)(1));
  // Warm up: JIT, Go's thread count after pinning, the store's bounds.
  await batch(floor, 2000, false);
  await batch(side, 2000, true);
  cpu.set(floor, 0).set(side, 0);

  const perRound = [];
  const allFloor = [];
  const allSide = [];
  for (let r = 0; r < rounds; r++) {
    global.gc();
    const f = await batch(floor, calls, false);
    global.gc();
    const s = await batch(side, calls, true);
    allFloor.push(...f);
    allSide.push(...s);
    const fs = sorted(f);
    const ss = sorted(s);
    perRound.push({
      floorP50: pct(fs, 0.5), floorP99: pct(fs, 0.99), sideP50: pct(ss, 0.5), sideP99: pct(ss, 0.99),
      ratioP50: pct(ss, 0.5) / pct(fs, 0.5), ratioP99: pct(ss, 0.99) / pct(fs, 0.99),
    });
  }
  const status = checkResult(side, (await side.roundTrip((id) => request(id, 'status', {}))).line);
  await floor.close();
  await side.close();

  const af = sorted(allFloor);
  const as = sorted(allSide);
  const res = {
    mode: 'small', label: opt.label, requestBytes: size, rounds, callsPerRound: calls,
    ratioP50: median(perRound.map((x) => x.ratioP50)),
    ratioP99: median(perRound.map((x) => x.ratioP99)),
    floorP50us: us(median(perRound.map((x) => x.floorP50))),
    floorP99us: us(median(perRound.map((x) => x.floorP99))),
    sideP50us: us(median(perRound.map((x) => x.sideP50))),
    sideP99us: us(median(perRound.map((x) => x.sideP99))),
    pooled: {
      floorP50us: us(pct(af, 0.5)), floorP99us: us(pct(af, 0.99)), floorMaxus: us(af[af.length - 1]),
      sideP50us: us(pct(as, 0.5)), sideP99us: us(pct(as, 0.99)), sideMaxus: us(as[as.length - 1]),
    },
    cpuPerCallus: { floor: us(cpu.get(floor) / (rounds * calls)), side: us(cpu.get(side) / (rounds * calls)) },
    pendingCalls: status.store,
    perRound,
  };
  const f1 = (x) => x.toFixed(1).padStart(8);
  console.log(`\nsmall call: ${size} B tool.execute.before, ${rounds} rounds x ${calls} calls per peer, ${opt.label}`);
  console.log('                        p50 µs   p99 µs   max µs');
  console.log(`  echo floor         ${f1(res.pooled.floorP50us)} ${f1(res.pooled.floorP99us)} ${f1(res.pooled.floorMaxus)}`);
  console.log(`  hookwire           ${f1(res.pooled.sideP50us)} ${f1(res.pooled.sideP99us)} ${f1(res.pooled.sideMaxus)}`);
  console.log(`  median of per-round ratios: p50 ${res.ratioP50.toFixed(2)}x, p99 ${res.ratioP99.toFixed(2)}x`);
  console.log(`  CPU time per call (schedstat, all threads): echo ${res.cpuPerCallus.floor.toFixed(1)} µs, hookwire ${res.cpuPerCallus.side.toFixed(1)} µs`);
  console.log(`  (sidecar store after the run: ${JSON.stringify(status.store)})`);
  return res;
}

async function large() {
  const shim = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'shim', 'dist');
  const { TransformSync } = await import(join(shim, 'transformsync.js'));
  const { projectMessages } = await import(join(shim, 'projection.js'));
  const { applyPatchInPlace } = await import(join(shim, 'patch.js'));
  const stateDir = mkdtempSync(join(tmpdir(), 'hookwire-bench-first-'));
  const floor = new Peer('echo -len', opt.echo, ['-len']);
  const side = await startSidecar();
  const defaultRounds = { '1MB': 15, '5MB': 7 };
  const results = {};
  for (const name of Object.keys(SIZES)) {
    const file = opt.histories && join(opt.histories, `history-${name}.json`);
    const params = file && existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : makeHistory(SIZES[name]);
    const rounds = Number(opt.rounds ?? defaultRounds[name]);
    const lineBytes = Buffer.byteLength(request(1, 'chat.messages.transform', params));
    const viaFloor = async () => {
      let sent = '';
      const { line, ns } = await floor.roundTrip((id) => (sent = request(id, 'chat.messages.transform', params)));
      const want = Buffer.byteLength(sent) - 1;
      if (Number(line) !== want) throw new Error(`echo -len said ${line}, want ${want}`);
      return ns;
    };
    let ops = 0;
    let sideCpu = 0;
    let lastCpu = 0;
    let lastParse = 0;
    const viaSide = async () => {
      const cpu0 = side.cpuNs();
      const { line, ns } = await side.roundTrip((id) => request(id, 'chat.messages.transform', params));
      // The client's wall time ends with the reply parsed.
      const p0 = process.hrtime.bigint();
      const result = checkResult(side, line);
      lastParse = Number(process.hrtime.bigint() - p0);
      // The collector's and the runtime's other threads may still be
      // finishing this request's work: give them a moment before reading.
      await new Promise((resolve) => setTimeout(resolve, 20));
      lastCpu = side.cpuNs() - cpu0;
      sideCpu += lastCpu;
      ops = result.patch.length;
      return ns + lastParse;
    };
    // The client's JSON.stringify of the request alone.
    const stringify = () => {
      const t0 = process.hrtime.bigint();
      request(1, 'chat.messages.transform', params);
      return Number(process.hrtime.bigint() - t0);
    };
    // The shim's first transform in a new OpenCode process: a sidecar
    // started for it (untimed) on a state database that holds the session
    // (the frozen blocks of an earlier process), and OpenCode's fresh copy
    // of the history (JSON.parse, as OpenCode 1.18 reads each part from
    // SQLite) moved out of the young generation before t0 (see grow).
    const firstDB = join(stateDir, `first-${name}.db`);
    const shimFirst = async () => {
      const fresh = await startSidecar(firstDB);
      await new Promise((resolve) => setTimeout(resolve, 20)); // its start-up work done
      const sidecar = {
        async request(method, p) {
          const { line } = await fresh.roundTrip((id) => request(id, method, p));
          const reply = JSON.parse(line);
          return reply.error ? { ok: false, reason: 'error', code: reply.error.code, detail: reply.error.message } : { ok: true, result: reply.result };
        },
      };
      global.gc();
      await new Promise((resolve) => setTimeout(resolve, 10));
      const output = { messages: JSON.parse(JSON.stringify(params.output.messages)) };
      global.gc({ type: 'minor' });
      global.gc({ type: 'minor' });
      const t0 = process.hrtime.bigint();
      const r = await new TransformSync().request(sidecar, 'chat.messages.transform', params.input, output, 60_000);
      const t1 = process.hrtime.bigint();
      if (!r?.ok || !r.result.base || !applyPatchInPlace(output, r.result.patch).ok) throw new Error(`shim first request: ${JSON.stringify(r).slice(0, 300)}`);
      const t2 = process.hrtime.bigint();
      // Its projection alone, on the same copy, after the call.
      const p0 = process.hrtime.bigint();
      projectMessages(output);
      const proj = Number(process.hrtime.bigint() - p0);
      await fresh.close();
      return { wall: Number(t2 - t0), reply: Number(t1 - t0), apply: Number(t2 - t1), proj };
    };
    // Node's deep copy of the history, timed and its CPU time read (all of
    // Node's threads: process.cpuUsage), in ns.
    const nodeCopy = () => {
      const u0 = process.cpuUsage();
      const t0 = process.hrtime.bigint();
      JSON.parse(JSON.stringify(params.output.messages));
      const wall = Number(process.hrtime.bigint() - t0);
      const u = process.cpuUsage(u0);
      return { wall, cpu: (u.user + u.system) * 1000 };
    };
    for (let i = 0; i < 2; i++) { // warm up (the first also fills the state database)
      await viaFloor();
      await viaSide();
      await shimFirst();
    }
    sideCpu = 0;
    const f = [];
    const s = [];
    const n = [];
    const nCpu = [];
    const ratio = [];
    const cpuRatio = [];
    const w = { raw: [], shim: [], stringify: [], floor: [], parse: [], shimMs: [], shimApply: [], shimProj: [], strMs: [], parseMs: [] };
    for (let r = 0; r < rounds; r++) {
      global.gc();
      f.push(await viaFloor());
      global.gc();
      s.push(await viaSide());
      ratio.push(s[r] / f[r]);
      global.gc();
      const str = stringify();
      global.gc();
      const copy = nodeCopy();
      n.push(copy.wall);
      nCpu.push(copy.cpu);
      cpuRatio.push(lastCpu / copy.cpu);
      const first = await shimFirst();
      w.raw.push(s[r] / copy.wall);
      w.shim.push(first.wall / copy.wall);
      w.stringify.push(str / copy.wall);
      w.floor.push(f[r] / copy.wall);
      w.parse.push(lastParse / copy.wall);
      w.shimMs.push(first.wall);
      w.shimApply.push(first.apply);
      w.shimProj.push(first.proj);
      w.strMs.push(str);
      w.parseMs.push(lastParse);
    }
    results[name] = {
      requestBytes: lineBytes, messages: params.output.messages.length, patchOps: ops, rounds,
      floorMs: ms(median(f)), sideMs: ms(median(s)), ratio: median(ratio), nodeJSONCopyMs: ms(median(n)),
      floorMinMs: ms(Math.min(...f)), sideMinMs: ms(Math.min(...s)), sideCpuMs: ms(sideCpu / rounds),
      // The full-form transform's cost to the machine: the sidecar's CPU
      // time for the request (all its threads) over Node's CPU time for a
      // deep copy of the same history, median of per-round ratios.
      nodeJSONCopyCpuMs: ms(median(nCpu)), sideCpuVsCopy: median(cpuRatio),
      // Wall time as OpenCode waits for it, over the deep copy's wall time,
      // median of per-round ratios: the whole history sent as it is (from
      // the request's JSON.stringify to its parsed reply), and the shim's
      // first request of a new process (projection, full form with sync,
      // reply taken, patch applied). Beside them what the first is made of.
      wallVsCopy: median(w.raw), shimFirstVsCopy: median(w.shim), shimFirstMs: ms(median(w.shimMs)),
      shimFirstApplyMs: ms(median(w.shimApply)), shimProjectionMs: ms(median(w.shimProj)),
      shimRequestBytes: Buffer.byteLength(request(1, 'chat.messages.transform', { input: params.input, output: projectMessages(params.output), sync: { session: params.output.messages[0].info.sessionID } })),
      stringifyVsCopy: median(w.stringify), floorVsCopy: median(w.floor), parseVsCopy: median(w.parse),
      stringifyMs: ms(median(w.strMs)), parseMs: ms(median(w.parseMs)),
    };
  }
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const memory = { hookwire: side.memory(), echo: floor.memory() };
  await floor.close();
  await side.close();
  rmSync(stateDir, { recursive: true, force: true });

  console.log(`\nchat.messages.transform, full round trip over pipes (stringify + pipe + sidecar + reply), ${opt.label}`);
  console.log('                 msgs  ops   echo -len ms   hookwire ms   ratio (median per round)   node JSON copy ms (CPU)   hookwire CPU ms   CPU / copy CPU');
  for (const [name, r] of Object.entries(results)) {
    console.log(`  ${name.padEnd(4)} ${String(r.requestBytes).padStart(8)} B ${String(r.messages).padStart(4)} ${String(r.patchOps).padStart(4)}` +
      `   ${r.floorMs.toFixed(2).padStart(10)}   ${r.sideMs.toFixed(2).padStart(11)}   ${r.ratio.toFixed(2).padStart(8)}x` +
      `                 ${r.nodeJSONCopyMs.toFixed(2).padStart(8)} (${r.nodeJSONCopyCpuMs.toFixed(2)})   ${r.sideCpuMs.toFixed(2).padStart(15)}   ${r.sideCpuVsCopy.toFixed(2).padStart(12)}x`);
  }
  console.log('  wall time over Node\'s deep copy (median per round): whole history sent = client stringify + pipe (the echo -len floor) + sidecar + reply parse; the shim\'s first request');
  for (const [name, r] of Object.entries(results)) {
    console.log(`  ${name.padEnd(4)} whole history ${r.wallVsCopy.toFixed(2)}x (stringify ${r.stringifyVsCopy.toFixed(2)}x = ${r.stringifyMs.toFixed(2)} ms, floor ${r.floorVsCopy.toFixed(2)}x,` +
      ` reply parse ${r.parseVsCopy.toFixed(3)}x = ${r.parseMs.toFixed(2)} ms);` +
      ` shim first request ${r.shimFirstVsCopy.toFixed(2)}x (${r.shimFirstMs.toFixed(2)} ms, ${r.shimRequestBytes} B sent, projection ${r.shimProjectionMs.toFixed(2)} ms, patch applied ${r.shimFirstApplyMs.toFixed(2)} ms)`);
  }
  const mib = (kib) => (kib / 1024).toFixed(1);
  console.log(`  RSS 1 s after the last request: hookwire VmRSS ${mib(memory.hookwire.vmRSSKiB)} MiB, VmHWM ${mib(memory.hookwire.vmHWMKiB)} MiB;` +
    ` echo VmRSS ${mib(memory.echo.vmRSSKiB)} MiB, VmHWM ${mib(memory.echo.vmHWMKiB)} MiB`);
  return { mode: 'large', label: opt.label, sizes: results, memory };
}

// grow: the per-request cost of a transform whose history grew by one
// message, as the OpenCode shim pays it (shim/dist: TransformSync's diff or
// the full projection, JSON.stringify, the pipe, the sidecar, JSON.parse of
// the reply, the patch applied to OpenCode's copy), for the incremental
// form (PROTOCOL.md 4.6) and the full form, each on its own sidecar, against
// Node's deep copy of that history (JSON.parse(JSON.stringify(messages))),
// round by round and size by size interleaved. Each round first brings the
// incremental sidecar's base back to the history of n messages (untimed),
// then times the history of n + 1.
async function grow() {
  const shim = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'shim', 'dist');
  const { TransformSync } = await import(join(shim, 'transformsync.js'));
  const { projectMessages } = await import(join(shim, 'projection.js'));
  const { applyPatchInPlace } = await import(join(shim, 'patch.js'));
  const rounds = Number(opt.rounds ?? 30);
  const all = makeHistory(GROW_SIZES['5MB'] + (4 << 20)).output.messages;
  const prefix = [];
  let bytes = 64;
  for (const m of all) prefix.push((bytes += Buffer.byteLength(JSON.stringify(m)) + 1));
  // Each size is its own session, as three OpenCode sessions would be: a
  // session's base is then its own history of n messages, and the untimed
  // call before each timed one takes back the message the last round
  // added, instead of rebuilding from another size's history.
  const sizes = Object.entries(GROW_SIZES).map(([name, target]) => {
    const n = prefix.findIndex((b) => b >= target) + 1;
    const session = `${all[0].info.sessionID}_${name}`;
    const own = all.slice(0, n + 1).map((m) => ({
      ...m,
      info: { ...m.info, sessionID: session },
      parts: m.parts.map((p) => ('sessionID' in p ? { ...p, sessionID: session } : p)),
    }));
    return { name, n, small: own.slice(0, n), grown: own, bytes: prefix[n] };
  });
  const incSide = await startSidecar();
  const fullSide = await startSidecar();
  // The shim's Sidecar.request over a Peer: a CallResult, the reply parsed.
  const adapter = (peer) => ({
    async request(method, params) {
      const { line } = await peer.roundTrip((id) => request(id, method, params));
      const reply = JSON.parse(line);
      return reply.error ? { ok: false, reason: 'error', code: reply.error.code, detail: reply.error.message } : { ok: true, result: reply.result };
    },
  });
  const inc = adapter(incSide);
  const sync = new TransformSync({ maxSessions: 16, maxBytes: 64 << 20 });
  // Objects of the shapes JSON.parse gives OpenCode's messages stay alive
  // all run long, as they do in a host that holds its sessions: otherwise
  // only the per-request copies have those shapes, the full GC before each
  // request frees their maps, and V8 throws the shim's optimized code away
  // every few rounds (--trace-deopt: 'weak objects', then 'wrong map'),
  // which no long-running host does to it.
  const shapes = sizes.map((z) => JSON.parse(JSON.stringify(z.grown)));
  // timed runs fn on OpenCode's fresh copy of messages and times it. The
  // copy is made with JSON.parse, as OpenCode 1.18 reads each part from
  // SQLite (a JSON text column) before every LLM request, after the full GC
  // and right before the call, as OpenCode builds it right before calling
  // the hook: a global.gc() just before t0
  // leaves V8's concurrent sweeper threads running, and on 2 CPUs they take
  // the sidecar's CPU for a time that grows with Node's heap.
  const timed = async (messages, fn) => {
    global.gc();
    // The host idles while the model works; V8's concurrent sweeping after
    // the forced GC is done by then, too.
    await new Promise((resolve) => setTimeout(resolve, 10));
    const output = { messages: JSON.parse(JSON.stringify(messages)) };
    // Two scavenges move the fresh copy out of the young generation, as the
    // host's own allocations soon would: otherwise the first scavenge that
    // falls in the timed call (any small allocation can start it) copies
    // the whole live history, several ms that depend on when it falls and
    // that are the host's GC work, not the call's (Bun's collector, which
    // OpenCode runs on, does not copy).
    global.gc({ type: 'minor' });
    global.gc({ type: 'minor' });
    const t0 = process.hrtime.bigint();
    await fn(output);
    return Number(process.hrtime.bigint() - t0);
  };
  const incremental = async (messages) =>
    timed(messages, async (output) => {
      const r = await sync.request(inc, 'chat.messages.transform', {}, output, 60_000);
      if (!r.ok || !applyPatchInPlace(output, r.result.patch).ok) throw new Error(`incremental: ${JSON.stringify(r).slice(0, 300)}`);
    });
  const fullForm = async (messages) =>
    timed(messages, async (output) => {
      const { line } = await fullSide.roundTrip((id) => request(id, 'chat.messages.transform', { input: {}, output: projectMessages(output) }));
      const reply = JSON.parse(line);
      if (!reply.result || !applyPatchInPlace(output, reply.result.patch).ok) throw new Error(`full: ${line.subarray(0, 300)}`);
    });
  const nodeCopy = (messages) => {
    global.gc();
    const t0 = process.hrtime.bigint();
    JSON.parse(JSON.stringify(messages));
    return Number(process.hrtime.bigint() - t0);
  };
  const sent = { incremental: 0, full: 0 };
  const per = Object.fromEntries(sizes.map((z) => [z.name, { inc: [], full: [], copy: [], incRatio: [], fullRatio: [] }]));
  // Warm-up rounds, untimed, until V8 has optimized the shim's code (each
  // compile takes about 100 ms on a background thread).
  const warmup = Number(opt.warmup ?? 5);
  for (let r = -warmup; r < rounds; r++) {
    for (const z of sizes) {
      await incremental(z.small); // the base: n messages
      const i = await incremental(z.grown);
      const f = await fullForm(z.grown);
      const c = nodeCopy(z.grown);
      if (r < 0) continue;
      const x = per[z.name];
      x.inc.push(i);
      x.full.push(f);
      x.copy.push(c);
      x.incRatio.push(i / c);
      x.fullRatio.push(f / c);
    }
  }
  // What one grown request sends, in bytes, in each form.
  for (const z of sizes) {
    await incremental(z.small);
    const p = sync.prepare({}, { messages: structuredClone(z.grown) });
    sent.incremental = Math.max(sent.incremental, Buffer.byteLength(JSON.stringify(p.params)));
  }
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const memory = { incremental: incSide.memory(), full: fullSide.memory() };
  shapes.length = 0;
  await incSide.close();
  await fullSide.close();

  const results = {};
  for (const z of sizes) {
    const x = per[z.name];
    results[z.name] = {
      messages: z.grown.length, historyBytes: prefix[z.n],
      projectedBytes: Buffer.byteLength(JSON.stringify(projectMessages({ messages: z.grown }))),
      incrementalMs: ms(median(x.inc)), fullMs: ms(median(x.full)), nodeCopyMs: ms(median(x.copy)),
      incrementalVsCopy: median(x.incRatio), fullVsCopy: median(x.fullRatio),
    };
  }
  const big = results['5MB'];
  const small = results['100KB'];
  const res = {
    mode: 'grow', label: opt.label, rounds, sizes: results, memory,
    incremental5MBvs100KB: big.incrementalMs / small.incrementalMs,
  };
  console.log(`\nchat.messages.transform, history grown by one message, as the shim pays it (${rounds} rounds, medians), ${opt.label}`);
  console.log('         msgs   history B  projected B   incremental ms   full ms   node copy ms   incr/copy   full/copy');
  for (const [name, r] of Object.entries(results)) {
    console.log(`  ${name.padEnd(5)} ${String(r.messages).padStart(4)} ${String(r.historyBytes).padStart(11)} ${String(r.projectedBytes).padStart(12)}` +
      `   ${r.incrementalMs.toFixed(3).padStart(14)}   ${r.fullMs.toFixed(2).padStart(7)}   ${r.nodeCopyMs.toFixed(2).padStart(12)}` +
      `   ${r.incrementalVsCopy.toFixed(3).padStart(8)}x   ${r.fullVsCopy.toFixed(3).padStart(8)}x`);
  }
  const mib = (kib) => (kib / 1024).toFixed(1);
  console.log(`  incremental 5MB : 100KB = ${res.incremental5MBvs100KB.toFixed(2)}x`);
  console.log(`  RSS 1 s after: incremental sidecar VmRSS ${mib(memory.incremental.vmRSSKiB)} MiB (VmHWM ${mib(memory.incremental.vmHWMKiB)}),` +
    ` full-form sidecar VmRSS ${mib(memory.full.vmRSSKiB)} MiB (VmHWM ${mib(memory.full.vmHWMKiB)})`);
  return res;
}

// projected: see the header. Each variant is a sidecar and the shim code
// that drives it; 'hookwire' is the build under test, 'base' the other.
async function projected() {
  const here = dirname(fileURLToPath(import.meta.url));
  const variants = [{ name: 'hookwire', bin: opt.hookwire, shim: join(here, '..', '..', 'shim', 'dist') }];
  if (opt['hookwire-base'] && opt['shim-base']) variants.push({ name: 'base', bin: opt['hookwire-base'], shim: opt['shim-base'] });
  const stateDir = mkdtempSync(join(tmpdir(), 'hookwire-bench-projected-'));
  for (const v of variants) {
    v.TransformSync = (await import(join(v.shim, 'transformsync.js'))).TransformSync;
    v.applyPatchInPlace = (await import(join(v.shim, 'patch.js'))).applyPatchInPlace;
    // The shim's own transport (rpc.js's LineConnection), as its Sidecar
    // calls it: every request bounded by the bytes in flight.
    const { LineConnection } = await import(join(v.shim, 'rpc.js'));
    const proc = spawn(v.bin, ['--log-level', 'warn', '--state', join(stateDir, `${v.name}.db`)], { stdio: ['pipe', 'pipe', 'inherit'] });
    const conn = new LineConnection(proc.stdout, proc.stdin);
    v.proc = proc;
    v.exited = new Promise((resolve) => proc.on('exit', resolve));
    v.sidecar = {
      async request(method, p) {
        try {
          return { ok: true, result: await conn.request(method, p, { maxBufferedBytes: 8 << 20 }) };
        } catch (err) {
          return { ok: false, reason: 'error', code: err.code, detail: String(err) };
        }
      },
    };
    for (const [method, p] of [['initialize', { protocolVersion: 1 }], ['chat.message', {
      input: { sessionID: 'ses_b', agent: 'orchestrator' }, output: { message: { agent: 'orchestrator' } },
    }]]) {
      const r = await v.sidecar.request(method, p);
      if (!r.ok) throw new Error(`${v.name} ${method}: ${r.detail}`);
    }
  }
  const { projectMessages } = await import(join(variants[0].shim, 'projection.js'));
  const defaultRounds = { '1MB': 21, '5MB': 9 };
  const results = {};
  for (const name of Object.keys(SIZES)) {
    const file = opt.histories && join(opt.histories, `history-text-${name}.json`);
    const params = file && existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : makeTextHeavyHistory(SIZES[name]);
    const messages = params.output.messages;
    const rounds = Number(opt.rounds ?? defaultRounds[name]);
    // As in grow: OpenCode's fresh copy (JSON.parse, as OpenCode 1.18 reads
    // each part from SQLite) made after a full GC and moved out of the young
    // generation before t0, so the host's own GC work is not timed.
    const first = async (v) => {
      global.gc();
      await new Promise((resolve) => setTimeout(resolve, 10));
      const output = { messages: JSON.parse(JSON.stringify(messages)) };
      global.gc({ type: 'minor' });
      global.gc({ type: 'minor' });
      const t0 = process.hrtime.bigint();
      const r = await new v.TransformSync().request(v.sidecar, 'chat.messages.transform', params.input, output, 60_000);
      if (!r?.ok || !r.result.base || !v.applyPatchInPlace(output, r.result.patch).ok) throw new Error(`${v.name}: ${JSON.stringify(r).slice(0, 300)}`);
      return Number(process.hrtime.bigint() - t0);
    };
    const nodeCopy = async () => {
      global.gc();
      await new Promise((resolve) => setTimeout(resolve, 10));
      const t0 = process.hrtime.bigint();
      JSON.parse(JSON.stringify(messages));
      return Number(process.hrtime.bigint() - t0);
    };
    for (let i = 0; i < 3; i++) for (const v of variants) await first(v); // warm up: JIT, the sidecar's heap
    const per = Object.fromEntries(variants.map((v) => [v.name, { ms: [], ratio: [] }]));
    const copies = [];
    for (let r = 0; r < rounds; r++) {
      const order = r % 2 ? [...variants].reverse() : variants;
      const c = await nodeCopy();
      copies.push(c);
      for (const v of order) {
        const t = await first(v);
        per[v.name].ms.push(t);
        per[v.name].ratio.push(t / c);
      }
    }
    const proj = projectMessages(params.output);
    const textBytes = proj.messages.reduce((a, m) => a + m.parts.reduce((b, p) => b + (p.text ? Buffer.byteLength(p.text) : 0), 0), 0);
    results[name] = {
      historyBytes: Buffer.byteLength(JSON.stringify(params)), messages: messages.length,
      parts: messages.reduce((a, m) => a + m.parts.length, 0), textBytes,
      requestBytes: Buffer.byteLength(request(1, 'chat.messages.transform', { input: params.input, output: proj, sync: { session: messages[0].info.sessionID } })),
      rounds, nodeCopyMs: ms(median(copies)),
      variants: Object.fromEntries(variants.map((v) => [v.name, { ms: ms(median(per[v.name].ms)), vsCopy: median(per[v.name].ratio) }])),
    };
  }
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const memory = Object.fromEntries(variants.map((v) => [v.name, memoryOf(v.proc.pid)]));
  for (const v of variants) {
    v.proc.stdin.end();
    await v.exited;
  }
  rmSync(stateDir, { recursive: true, force: true });

  console.log(`\nchat.messages.transform, projected full form of a text-heavy history, the shim's first request to a warm sidecar, over Node's deep copy (median per round), ${opt.label}`);
  for (const [name, r] of Object.entries(results)) {
    const vs = Object.entries(r.variants).map(([n, x]) => `${n} ${x.vsCopy.toFixed(2)}x (${x.ms.toFixed(2)} ms)`).join(', ');
    console.log(`  ${name.padEnd(4)} ${r.historyBytes} B, ${r.messages} messages, ${r.parts} parts, ${r.requestBytes} B sent (text ${r.textBytes} B): ${vs}; deep copy ${r.nodeCopyMs.toFixed(2)} ms; ${r.rounds} rounds`);
  }
  const mib = (kib) => (kib / 1024).toFixed(1);
  console.log('  RSS 1 s after the last 5MB request: ' + Object.entries(memory).map(([n, m]) => `${n} VmRSS ${mib(m.vmRSSKiB)} MiB, VmHWM ${mib(m.vmHWMKiB)} MiB`).join('; '));
  return { mode: 'projected', label: opt.label, sizes: results, memory };
}

const modes = { small, large, grow, projected };
if (!modes[opt.mode]) {
  console.error(`client.mjs: unknown --mode ${opt.mode}`);
  process.exit(2);
}
const res = await modes[opt.mode]();
if (opt.json) writeFileSync(opt.json, JSON.stringify(res, null, 2) + '\n');
