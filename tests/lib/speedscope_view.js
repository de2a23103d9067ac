// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// What speedscope's own importer made of a profile: the rows of its sandwich view
// (total, self and name of every function), as headless Chromium's --dump-dom
// printed them, against the same figures worked out from the folded output of the
// same recording. Prints the rows; exits 1 if any differs, or fewer than 15 (or all) were read;
// exits 2 if the page has no row of the table at all (dumped before the app drew it: try again).
// Usage: node speedscope_view.js DOM.html PROFILE.folded
'use strict';
const fs = require('fs');

const unescape = (s) =>
  s.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&');
const number = (s) => Number(s.replace(/[,\s]/g, ''));

const dom = fs.readFileSync(process.argv[2], 'utf8');
const row = /<tr[^>]*><td[^>]*>([\d,]+) \([^)]*\)<div.*?<\/td><td[^>]*>([\d,]+) \([^)]*\)<div.*?<\/td><td(?: title="[^"]*")?[^>]*>(?:<span[^>]*><\/span>)?([^<]*)<\/td><\/tr>/g;
const shown = new Map();
for (const m of dom.matchAll(row)) {
  const name = unescape(m[3]);
  const prev = shown.get(name) || { total: 0, self: 0, rows: 0 };
  shown.set(name, { total: prev.total + number(m[1]), self: prev.self + number(m[2]),
    rows: prev.rows + 1 });
}

if (shown.size === 0) {
  const trs = (dom.match(/<tr[\s>]/g) || []).length;
  console.log(`no row of the sandwich table read: ${trs} <tr> in the page (drawn yet?)`);
  process.exit(2);
}

// folded: "comm;root;...;leaf COUNT"; kernel frames are "name_[k]" in both
const want = new Map();
for (const line of fs.readFileSync(process.argv[3], 'utf8').split('\n')) {
  const m = /^(.*) (\d+)$/.exec(line);
  if (!m) continue;
  const frames = m[1].split(';').slice(1);
  const n = Number(m[2]);
  for (const f of new Set(frames)) {
    const w = want.get(f) || { total: 0, self: 0 };
    w.total += n;
    want.set(f, w);
  }
  want.get(frames[frames.length - 1]).self += n;
}

// The sandwich table is a virtual list: it renders the rows that fit the window, the
// functions by total, largest first. Those below the last row rendered may be absent; every
// function with more samples than the smallest row shown must be there.
const least = Math.min(...[...shown.values()].map((s) => s.total));
let bad = 0, below = 0;
for (const [name, w] of want) {
  const s = shown.get(name);
  if (!s && w.total < least) {
    below++;
    continue;
  }
  // one name in two files is two speedscope rows, whose totals may count a sample twice
  const ok = s && s.self === w.self && (s.rows > 1 || s.total === w.total);
  if (!ok) bad++;
  console.log(`${ok ? 'ok ' : 'BAD'} ${name}: speedscope total ${s ? s.total : '-'} self ` +
    `${s ? s.self : '-'}, folded total ${w.total} self ${w.self}`);
}
for (const name of shown.keys()) {
  if (!want.has(name)) {
    bad++;
    console.log(`BAD ${name}: shown by speedscope, not in the folded output`);
  }
}
console.log(`${shown.size} functions shown by speedscope, ${want.size} in the folded output ` +
  `(${below} below the last row the window rendered)`);
process.exit(bad || shown.size < Math.min(want.size, 15) ? 1 : 0);
