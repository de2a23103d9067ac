// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// An independent pprof reader for the tests (the pprof-format npm package,
// installed by make test-deps under build/npm): prints a gzip'ed profile's
// stacks as folded lines, root first, the first sample value summed per stack.
// Usage: node pprof_decode.js NODE_MODULES PROFILE.pb.gz
'use strict';
const fs = require('fs');
const path = require('path');
const zlib = require('zlib');
const { Profile } = require(path.join(process.argv[2], 'pprof-format'));

const p = Profile.decode(zlib.gunzipSync(fs.readFileSync(process.argv[3])));
const str = (i) => p.stringTable.strings[Number(i)];
const fns = new Map(p.function.map((f) => [Number(f.id), str(f.name)]));
const locs = new Map(p.location.map((l) => [Number(l.id), l]));
const stacks = new Map();
for (const s of p.sample) {
  const names = [];
  for (const id of s.locationId) {
    // a location's lines are innermost first, as its stack is leaf first
    for (const line of locs.get(Number(id)).line) names.push(fns.get(Number(line.functionId)));
  }
  const key = names.reverse().join(';');
  stacks.set(key, (stacks.get(key) || 0) + Number(s.value[0]));
}
console.log('# sample types: ' + p.sampleType.map((t) => str(t.type) + '/' + str(t.unit)).join(' '));
for (const [k, n] of [...stacks].sort()) console.log(k + ' ' + n);
// "lines": each location's Lines instead, innermost first, as
// "loc 0xADDR: name|system_name|filename|start_line|line ; ...", and each
// mapping's has_* flags.
if (process.argv[4] === 'lines') {
  const fnById = new Map(p.function.map((f) => [Number(f.id), f]));
  for (const l of p.location) {
    const parts = l.line.map((ln) => {
      const f = fnById.get(Number(ln.functionId));
      return [str(f.name), str(f.systemName), str(f.filename), Number(f.startLine), Number(ln.line)].join('|');
    });
    console.log('loc 0x' + Number(l.address).toString(16) + ': ' + parts.join(' ; '));
  }
  for (const m of p.mapping) {
    const flags = [['functions', m.hasFunctions], ['filenames', m.hasFilenames],
      ['line_numbers', m.hasLineNumbers], ['inline_frames', m.hasInlineFrames]];
    console.log('mapping ' + str(m.filename) + flags.filter((f) => f[1]).map((f) => ' ' + f[0]).join(''));
  }
}
