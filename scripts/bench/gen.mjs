// gen.mjs builds OpenCode-shaped chat.messages.transform params of a given
// size from the one recorded sample beside it (messages-transform-last.json,
// OpenCode 1.18.33): the sample's turn is repeated with fresh ids, its task
// calls get long results, and each turn adds read/bash/grep tool calls with
// large outputs (tool outputs are most of a real history's bytes). Every
// tenth turn keeps the sample's two errored task calls, so the sidecar's
// guidance path runs too. The output is deterministic: the same size gives
// the same bytes.
//
//   node gen.mjs BYTES            write params JSON (one line) to stdout
//   node gen.mjs --out DIR        write DIR/history-1MB.json and DIR/history-5MB.json
//
// It is also imported by client.mjs (makeHistory).

import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

export const SIZES = { '1MB': 1 << 20, '5MB': 5 << 20 };
// The histories of client.mjs's grow mode (prefixes of one history).
export const GROW_SIZES = { '100KB': 100 << 10, '1MB': 1 << 20, '5MB': 5 << 20 };

// mulberry32: a small seeded PRNG, so histories do not depend on Math.random.
function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = ('const let return func if else for range err nil ctx handler session store ' +
  'message part patch decode encode buffer line frame request reply agent task label ' +
  'orchestrator explorer oracle config default value string bytes json pipe stdin stdout').split(' ');
// Characters that JSON escapes or that are multi-byte in UTF-8, as real
// source files and tool outputs have them.
const SPICE = ['"quoted"', '\\n', '\t', 'café', '→', '—', '✓', '<T>', '&&', "'s'", '\\\\'];

function line(rnd) {
  const n = 3 + Math.floor(rnd() * 10);
  const words = [];
  for (let i = 0; i < n; i++) {
    words.push(rnd() < 0.08 ? SPICE[Math.floor(rnd() * SPICE.length)] : WORDS[Math.floor(rnd() * WORDS.length)]);
  }
  const indent = '\t'.repeat(Math.floor(rnd() * 3));
  return indent + words.join(' ');
}

// text returns about `bytes` bytes of numbered source-like lines.
function text(rnd, bytes, numbered) {
  const out = [];
  let size = 0;
  for (let i = 1; size < bytes; i++) {
    const l = numbered ? String(i).padStart(5, '0') + '| ' + line(rnd) : line(rnd);
    out.push(l);
    size += l.length + 1;
  }
  return out.join('\n');
}

function id(prefix, n, rnd) {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  let s = prefix + '_' + (0x2298ee989001 + n).toString(16);
  for (let i = 0; i < 14; i++) s += alphabet[Math.floor(rnd() * alphabet.length)];
  return s;
}

const clone = (v) => JSON.parse(JSON.stringify(v));

export function loadSample() {
  return JSON.parse(readFileSync(join(here, 'messages-transform-last.json'), 'utf8'));
}

// makeHistory returns {input, output: {messages}} whose JSON is about
// `target` bytes (within one message of it, never more).
export function makeHistory(target, sample = loadSample()) {
  const rnd = prng(target);
  const base = sample.output.messages;
  const session = base[0].info.sessionID;
  const messages = [];
  let size = 64; // the envelope around the messages
  let n = 0;
  const push = (m) => {
    const s = Buffer.byteLength(JSON.stringify(m)) + 1;
    if (size + s > target) return false;
    messages.push(m);
    size += s;
    return true;
  };
  let t = 0;
  outer: for (; ; t++) {
    let userID = '';
    for (const orig of base) {
      const m = clone(orig);
      const msgID = id('msg', n++, rnd);
      if (m.info.role === 'user') userID = msgID;
      else m.info.parentID = userID;
      m.info.id = msgID;
      m.info.sessionID = session;
      m.info.time.created += t * 60000;
      for (const p of m.parts) {
        p.id = id('prt', n++, rnd);
        p.messageID = msgID;
        p.sessionID = session;
        if (p.type === 'text' && m.info.role === 'user' && t > 0) {
          p.text = `Turn ${t}: ${line(rnd)}`;
        }
        if (p.type === 'tool') {
          p.callID = `call_${t}_${n}`;
          const st = p.state;
          if (st.status === 'error' && t % 10 !== 0) {
            st.status = 'completed';
            delete st.error;
            st.title = st.input.description;
            st.metadata = { sessionId: id('ses', n++, rnd), truncated: false };
          }
          if (st.status === 'completed') {
            const sid = st.metadata?.sessionId ?? id('ses', n++, rnd);
            st.output = `<task id="${sid}" state="completed">\n<task_result>\n` +
              text(rnd, 2000 + Math.floor(rnd() * 20000), false) + '\n</task_result>\n</task>';
          }
        }
      }
      if (!push(m)) break outer;
    }
    // One more assistant step per turn: the orchestrator reads a file,
    // runs a command and greps, each with a large output.
    const m = clone(base[1]);
    const msgID = id('msg', n++, rnd);
    m.info.id = msgID;
    m.info.parentID = userID;
    m.info.sessionID = session;
    const [start, , finish] = m.parts;
    const tools = [
      { tool: 'read', input: { filePath: `/proj/src/file_${t}.go` }, output: '<file>\n' + text(rnd, 4000 + Math.floor(rnd() * 28000), true) + '\n</file>' },
      { tool: 'bash', input: { command: 'go test ./...', description: 'Run the tests' }, output: text(rnd, 1000 + Math.floor(rnd() * 12000), false) },
      { tool: 'grep', input: { pattern: 'func ', path: '/proj' }, output: text(rnd, 500 + Math.floor(rnd() * 6000), false) },
    ];
    m.parts = [start];
    for (const tl of tools) {
      m.parts.push({
        type: 'tool', tool: tl.tool, callID: `call_${t}_${n}`,
        state: {
          status: 'completed', input: tl.input, output: tl.output, title: tl.tool,
          metadata: { truncated: false }, time: { start: 1795993562631 + t, end: 1795993562700 + t },
        },
        id: id('prt', n++, rnd), sessionID: session, messageID: msgID,
      });
    }
    m.parts.push(finish);
    for (const p of [start, finish]) {
      p.id = id('prt', n++, rnd);
      p.messageID = msgID;
    }
    if (!push(m)) break;
  }
  return { input: clone(sample.input), output: { messages } };
}

function main(args) {
  if (args[0] === '--out' && args[1]) {
    mkdirSync(args[1], { recursive: true });
    const sample = loadSample();
    for (const [name, bytes] of Object.entries(SIZES)) {
      writeFileSync(join(args[1], `history-${name}.json`), JSON.stringify(makeHistory(bytes, sample)));
    }
    return;
  }
  const bytes = Number(args[0]);
  if (!Number.isInteger(bytes) || bytes <= 0) {
    process.stderr.write('usage: node gen.mjs BYTES | --out DIR\n');
    process.exit(2);
  }
  process.stdout.write(JSON.stringify(makeHistory(bytes)));
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main(process.argv.slice(2));
}
