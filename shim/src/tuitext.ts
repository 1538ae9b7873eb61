// Text that reaches OpenCode's screen from hookwire (the TUI section's
// lines, toasts, dialog titles), made safe and cut to a width. Every
// string the observer serves is raw data (a task label, an agent's name, a
// provider's error): it may hold terminal escape sequences (ESC ] 52 ...
// BEL writes the clipboard, ESC [ 2J clears the screen), bidi overrides
// that reorder what follows, or zero-width characters that hide text. Pure:
// no IO, no OpenCode types.

/** ESC sequences (CSI, OSC, DCS/SOS/PM/APC, two- and three-byte ones) and their C1 forms, whole, unterminated ones to the end. */
const ESCAPES =
  // eslint-disable-next-line no-control-regex
  /\x1b\[[0-?]*[ -/]*[@-~]?|\x9b[0-?]*[ -/]*[@-~]?|\x1b\][^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?|\x9d[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?|\x1b[PX^_][^\x1b\x9c]*(?:\x1b\\|\x9c)?|[\x90\x98\x9e\x9f][^\x1b\x9c]*(?:\x1b\\|\x9c)?|\x1b[ -/]*[0-~]?/g;
/** Line breaks and tabs: a space each. */
// eslint-disable-next-line no-control-regex
const BREAKS = /[\t\n\v\f\r\u0085\u2028\u2029]/g;
/** The other C0 and C1 controls, DEL. */
// eslint-disable-next-line no-control-regex
const CONTROLS = /[\x00-\x1f\x7f-\x9f]/g;
/** Bidi embeddings, overrides, isolates and marks. */
const BIDI = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
/** Zero-width and invisible format characters (the joiner is judged apart), the soft hyphen, Hangul fillers, variation selectors with no base. */
const INVISIBLE = /[\u00ad\u034f\u115f\u1160\u180b-\u180f\u200b\u200c\u2060-\u2064\u206a-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff9-\ufffb]|[\u{e0000}-\u{e007f}]|[\u{1bca0}-\u{1bca3}]/gu;
/** A lone surrogate (JSON can carry one). */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** What stays of a grapheme cluster that joins emoji, tags a flag or selects a presentation: these keep their joiner, tags and selectors. */
const EMOJI_CLUSTER = /\p{Extended_Pictographic}|\p{Regional_Indicator}|[\u{1f3fb}-\u{1f3ff}]/u;

let segmenter: { segment(s: string): Iterable<{ segment: string }> } | undefined | null;
/** Intl.Segmenter by grapheme (Node 20, Bun); null where there is none (code points then). */
function graphemes(s: string): Iterable<string> {
  if (segmenter === undefined) {
    try {
      segmenter = new Intl.Segmenter(undefined, { granularity: "grapheme" });
    } catch {
      segmenter = null;
    }
  }
  if (!segmenter) return [...s];
  const seg = segmenter;
  return (function* () {
    for (const x of seg.segment(s)) yield x.segment;
  })();
}

/** The longest raw string looked at: a label or error longer than this is cut before it is cleaned (nothing past it can reach a line). */
const MAX_RAW = 2048;

/**
 * s made safe for the screen: escape sequences removed whole (an OSC's
 * payload too), line breaks and tabs a space, the other controls, bidi
 * controls and invisible characters removed, a lone surrogate U+FFFD. A
 * zero-width joiner, variation selector or tag stays only inside a
 * grapheme cluster that is an emoji (a ZWJ family, a flag, a keycap).
 * Not a string: "".
 */
export function safeText(s: unknown): string {
  if (typeof s !== "string") return s === undefined || s === null ? "" : safeText(String(s));
  let t = s.length > MAX_RAW ? s.slice(0, MAX_RAW) : s;
  // Fast path: printable ASCII.
  if (/^[ -~]*$/.test(t)) return t;
  t = t.replace(LONE_SURROGATE, "\ufffd").replace(ESCAPES, "").replace(BREAKS, " ").replace(CONTROLS, "").replace(BIDI, "");
  if (!/[\u00ad\u034f\u115f\u1160\u180b-\u180f\u200b-\u200d\u2060-\u2064\u206a-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff9-\ufffb]|[\u{e0000}-\u{e007f}]|[\u{1bca0}-\u{1bca3}]/u.test(t)) return t;
  let out = "";
  for (const g of graphemes(t)) {
    if (EMOJI_CLUSTER.test(g)) {
      // An emoji keeps its joiners, tags and selectors, not other invisibles.
      out += g.replace(/[\u00ad\u034f\u200b\u200c\u2060-\u2064\ufeff]/g, "");
      continue;
    }
    // A keycap (digit, #, * with U+FE0F U+20E3) keeps its selector.
    if (/^[0-9#*]\ufe0f\u20e3$/u.test(g)) {
      out += g;
      continue;
    }
    out += g.replace(INVISIBLE, "").replace(/\u200d/g, "");
  }
  return out;
}

/**
 * East Asian Wide and Fullwidth ranges (Unicode 15.1 EastAsianWidth.txt,
 * W and F), outside the emoji Emoji_Presentation already covers; sorted,
 * inclusive.
 */
const WIDE: ReadonlyArray<readonly [number, number]> = [
  [0x1100, 0x115f], [0x2329, 0x232a], [0x2e80, 0x2e99], [0x2e9b, 0x2ef3], [0x2f00, 0x2fd5], [0x2ff0, 0x2ffb],
  [0x3000, 0x303e], [0x3041, 0x3096], [0x3099, 0x30ff], [0x3105, 0x312f], [0x3131, 0x318e], [0x3190, 0x31e3],
  [0x31f0, 0x321e], [0x3220, 0x3247], [0x3250, 0x4dbf], [0x4e00, 0xa48c], [0xa490, 0xa4c6], [0xa960, 0xa97c],
  [0xac00, 0xd7a3], [0xf900, 0xfaff], [0xfe10, 0xfe19], [0xfe30, 0xfe52], [0xfe54, 0xfe66], [0xfe68, 0xfe6b],
  [0xff01, 0xff60], [0xffe0, 0xffe6], [0x16fe0, 0x16fe4], [0x16ff0, 0x16ff1], [0x17000, 0x187f7], [0x18800, 0x18cd5],
  [0x18d00, 0x18d08], [0x1aff0, 0x1affe], [0x1b000, 0x1b122], [0x1b132, 0x1b132], [0x1b150, 0x1b152], [0x1b155, 0x1b155],
  [0x1b164, 0x1b167], [0x1b170, 0x1b2fb], [0x1f200, 0x1f202], [0x1f210, 0x1f23b], [0x1f240, 0x1f248], [0x1f250, 0x1f251],
  [0x1f260, 0x1f265], [0x20000, 0x2fffd], [0x30000, 0x3fffd],
];

function isWide(cp: number): boolean {
  let lo = 0;
  let hi = WIDE.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const [a, b] = WIDE[mid];
    if (cp < a) hi = mid - 1;
    else if (cp > b) lo = mid + 1;
    else return true;
  }
  return false;
}

const EMOJI_PRESENTATION = /^\p{Emoji_Presentation}/u;
const EMOJI = /^\p{Emoji}/u;
const REGIONAL = /\p{Regional_Indicator}/gu;
const ZERO_WIDTH_START = /^[\p{Mn}\p{Me}\p{Cf}]/u;

/** The columns one grapheme cluster takes: 2 for East Asian Wide/Fullwidth and emoji presentation (a flag, a ZWJ family, an emoji with U+FE0F), 0 for a lone mark, else 1. */
export function clusterWidth(g: string): number {
  const cp = g.codePointAt(0) ?? 0;
  if (cp >= 0x20 && cp < 0x7f) return 1;
  if (cp >= 0x1f1e6 && cp <= 0x1f1ff) return (g.match(REGIONAL)?.length ?? 0) >= 2 ? 2 : 1;
  if (EMOJI_PRESENTATION.test(g)) return g.includes("\ufe0e") ? 1 : 2;
  if (g.includes("\ufe0f") && EMOJI.test(g)) return 2;
  if (isWide(cp)) return 2;
  if (ZERO_WIDTH_START.test(g)) return 0;
  return 1;
}

/** The columns s takes on a terminal (s already safe). */
export function displayWidth(s: string): number {
  if (/^[ -~]*$/.test(s)) return s.length;
  let w = 0;
  for (const g of graphemes(s)) w += clusterWidth(g);
  return w;
}

/**
 * s cut to width columns: whole grapheme clusters (an emoji family or a
 * flag is never split), an ellipsis (one column) marking the cut. s is
 * expected safe (safeText).
 */
export function cutToWidth(s: string, width: number): string {
  if (/^[ -~]*$/.test(s)) return s.length <= width ? s : s.slice(0, Math.max(0, width - 1)) + "…";
  let w = 0;
  let out = "";
  // The longest prefix that leaves a column for the ellipsis.
  let kept = "";
  for (const g of graphemes(s)) {
    const gw = clusterWidth(g);
    if (w + gw > width) return kept + "…";
    w += gw;
    out += g;
    if (w <= width - 1) kept = out;
  }
  return out;
}

/** s made safe and cut to width columns. */
export function screenLine(s: unknown, width: number): string {
  return cutToWidth(safeText(s), width);
}
