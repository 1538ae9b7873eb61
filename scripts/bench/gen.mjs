// gen.mjs builds OpenCode-shaped chat.messages.transform params of a given
// size from the one recorded sample beside it (messages-transform-last.json,
// OpenCode 1.18.33): the sample's turn is repeated with fresh ids, its task
// calls get long results, and each turn adds read/bash/grep tool calls with
// large outputs (tool outputs are most of a real history's bytes). Every
// tenth turn keeps the sample's two errored task calls, so the sidecar's
// guidance path runs too. The output is deterministic: the same size gives
// the same bytes.
//
// makeTextHeavyHistory builds the other shape (issue 50): a conversation
// whose text parts, which the shim's projection keeps, are about a fifth
// of its bytes (1 MB: about 108 messages, 350 parts, 0.21 MB projected),
// where makeHistory's keep 2%. Each turn is a user message with a prompt
// (now and then a pasted excerpt) and an assistant step: its answer text,
// a read and a bash call with outputs, on every other turn a second text,
// and every tenth turn an errored task call for the guidance path.
//
//   node gen.mjs [--text] BYTES   write params JSON (one line) to stdout
//   node gen.mjs --out DIR        write DIR/history-{1MB,5MB}.json and
//                                 DIR/history-text-{1MB,5MB}.json
//
// It is also imported by client.mjs (makeHistory, makeTextHeavyHistory).

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

// prose returns about `bytes` bytes of sentences, as a model's answer or a
// user's prompt has them (paragraphs, now and then a list item).
function prose(rnd, bytes) {
  const out = [];
  let size = 0;
  while (size < bytes) {
    let s = line(rnd).trim();
    s = s[0].toUpperCase() + s.slice(1) + (rnd() < 0.15 ? ':' : '.');
    if (rnd() < 0.1) s = '\n- ' + s;
    else if (rnd() < 0.08) s = '\n\n' + s;
    out.push(s);
    size += s.length + 1;
  }
  return out.join(' ');
}

// makeTextHeavyHistory returns {input, output: {messages}} whose JSON is
// about `target` bytes (within one message of it, never more), a fifth of
// them text the projection keeps.
export function makeTextHeavyHistory(target, sample = loadSample()) {
  const rnd = prng(target ^ 0x7e47);
  const base = sample.output.messages;
  const session = base[0].info.sessionID;
  const [start, , finish] = base[1].parts;
  const errored = base.slice(1).flatMap((m) => m.parts).find((p) => p.type === 'tool' && p.state.status === 'error');
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
  const part = (p, msgID) => ({ ...clone(p), id: id('prt', n++, rnd), sessionID: session, messageID: msgID });
  for (let t = 0; ; t++) {
    const user = clone(base[0]);
    const userID = id('msg', n++, rnd);
    user.info.id = userID;
    user.info.sessionID = session;
    user.info.time.created += t * 60000;
    let prompt = `Turn ${t}: ` + prose(rnd, 250 + Math.floor(rnd() * 700));
    if (rnd() < 0.25) prompt += '\n\n```\n' + text(rnd, 500 + Math.floor(rnd() * 2500), false) + '\n```';
    user.parts = [part({ type: 'text', text: prompt }, userID)];
    if (!push(user)) break;

    const m = clone(base[1]);
    const msgID = id('msg', n++, rnd);
    m.info.id = msgID;
    m.info.parentID = userID;
    m.info.sessionID = session;
    m.info.time.created += t * 60000;
    m.info.finish = 'stop';
    const tool = (name, input, output) => part({
      type: 'tool', tool: name, callID: `call_${t}_${n}`,
      state: {
        status: 'completed', input, output, title: name,
        metadata: { truncated: false }, time: { start: 1795993562631 + t, end: 1795993562700 + t },
      },
    }, msgID);
    m.parts = [
      part(start, msgID),
      part({ type: 'text', text: prose(rnd, 1000 + Math.floor(rnd() * 1900)), time: { start: 1795993562631 + t, end: 1795993562700 + t } }, msgID),
      tool('read', { filePath: `/proj/src/file_${t}.go` }, '<file>\n' + text(rnd, 3500 + Math.floor(rnd() * 12000), true) + '\n</file>'),
      t % 10 === 9 && errored
        ? { ...part(errored, msgID), callID: `call_${t}_${n}` }
        : tool('bash', { command: 'go test ./...', description: 'Run the tests' }, text(rnd, 1000 + Math.floor(rnd() * 5000), false)),
    ];
    if (t % 2 === 1) {
      m.parts.push(part({ type: 'text', text: prose(rnd, 400 + Math.floor(rnd() * 1400)) }, msgID));
    }
    m.parts.push(part(finish, msgID));
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
      writeFileSync(join(args[1], `history-text-${name}.json`), JSON.stringify(makeTextHeavyHistory(bytes, sample)));
    }
    return;
  }
  const textHeavy = args[0] === '--text';
  const bytes = Number(args[textHeavy ? 1 : 0]);
  if (!Number.isInteger(bytes) || bytes <= 0) {
    process.stderr.write('usage: node gen.mjs [--text] BYTES | --out DIR\n');
    process.exit(2);
  }
  process.stdout.write(JSON.stringify(textHeavy ? makeTextHeavyHistory(bytes) : makeHistory(bytes)));
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main(process.argv.slice(2));
}
