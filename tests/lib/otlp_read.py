#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Reads an OTLP ProfilesData message as `protoc --decode` prints it (stdin)
and checks what the proto requires of it beyond the wire format: every table
of the dictionary present with its zero value at index 0, every index inside
its table, attribute keys unique per reference list, each Sample with one
value per its Profile's sample type.  Then prints, one per line:
(with files as arguments, each one's lines after "= FILE")

  R <resource attributes as k=v, sorted, joined by ','>
  P <type>/<unit> <period type>/<unit> <period>
  S <type>/<unit> <frames root first, ';'> <value>
  A <the sample's attributes as k=v, sorted, joined by ','> <frames> <value>
  F <frame name> <profile.frame.type or '-'> <mapping file or '-'> <build id or '-'>

Frames are a Location's lines, the function a line's caller inlined last.
Exit status 1 with the first violation on stderr.  Written for the tests:
its reading is protoc's, not cfiprof's.
"""
import re
import sys

TOKEN = re.compile(r'\s*(?:(\})|([A-Za-z_][A-Za-z0-9_]*)\s*(\{|:\s*("(?:[^"\\]|\\.)*"|[^\s]+)))')


def unescape(s):
    # protoc's C escapes (\n, \", \\, \ooo octal and \xhh hex bytes) back into bytes, then UTF-8
    out = bytearray()
    i = 0
    b = s.encode('utf-8')
    while i < len(b):
        c = b[i]
        if c != 0x5c:
            out.append(c)
            i += 1
            continue
        n = chr(b[i + 1])
        # a byte by number: up to 3 octal digits, or x and up to 2 hex digits
        base, digits, start = (8, '01234567', i + 1) if n in '01234567' else \
            (16, '0123456789abcdefABCDEF', i + 2) if n == 'x' else (0, '', 0)
        if base:
            j = start
            while j < len(b) and j < start + (3 if base == 8 else 2) and chr(b[j]) in digits:
                j += 1
            out.append(int(b[start:j], base))
            i = j
            continue
        out.append({'n': 10, 't': 9, 'r': 13, '"': 34, "'": 39, '\\': 92}.get(n, ord(n)))
        i += 2
    return out.decode('utf-8')


def parse(text):
    """protoc's text format into dicts of lists."""
    stack = [{}]
    pos = 0
    while True:
        m = TOKEN.match(text, pos)
        if not m:
            if text[pos:].strip():
                raise ValueError('cannot parse at %r' % text[pos:pos + 40])
            break
        pos = m.end()
        if m.group(1):
            stack.pop()
            continue
        key = m.group(2)
        if m.group(3) == '{':
            child = {}
            stack[-1].setdefault(key, []).append(child)
            stack.append(child)
        else:
            v = m.group(4)
            v = unescape(v[1:-1]) if v.startswith('"') else int(v) if re.match(r'-?\d+$', v) else v
            stack[-1].setdefault(key, []).append(v)
    return stack[0]


def one(msg, key, default=0):
    v = msg.get(key, [default])
    return v[0]


def fail(why):
    print('otlp_read: ' + why, file=sys.stderr)
    sys.exit(1)


def check(text):
    data = parse(text)
    dicts = data.get('dictionary', [])
    if len(dicts) != 1:
        fail('%d dictionaries' % len(dicts))
    d = dicts[0]
    tables = {k: d.get(k, []) for k in ('mapping_table', 'location_table', 'function_table',
                                        'link_table', 'string_table', 'attribute_table',
                                        'stack_table')}
    for k, t in tables.items():
        if not t:
            fail('%s is missing its zero entry' % k)
    strs = tables['string_table']
    if strs[0] != '':
        fail('string_table[0] is %r' % strs[0])
    for k in ('mapping_table', 'location_table', 'function_table', 'attribute_table',
              'stack_table'):
        if tables[k][0]:
            fail('%s[0] is not the zero value: %r' % (k, tables[k][0]))
    if any(k not in ('trace_id', 'span_id') for k in tables['link_table'][0]):
        fail('link_table[0]: %r' % tables['link_table'][0])

    def idx(table, i, what):
        if not isinstance(i, int) or i < 0 or i >= len(tables[table]):
            fail('%s: index %r outside %s (%d)' % (what, i, table, len(tables[table])))
        return tables[table][i]

    def s(i, what):
        return idx('string_table', i, what)

    def attrs(lst, what):
        keys = {}
        for i in lst:
            a = idx('attribute_table', i, what)
            k = s(one(a, 'key_strindex'), what + ' key')
            if k in keys:
                fail('%s: attribute key %s twice' % (what, k))
            v = one(a, 'value', {})
            keys[k] = one(v, 'string_value', None) if 'string_value' in v else one(v, 'int_value')
        return keys

    for i, f in enumerate(tables['function_table']):
        for k in ('name_strindex', 'system_name_strindex', 'filename_strindex'):
            s(one(f, k), 'function %d' % i)
    frames = {}
    for i, loc in enumerate(tables['location_table'][1:], 1):
        m = idx('mapping_table', one(loc, 'mapping_index'), 'location %d' % i)
        la = attrs(loc.get('attribute_indices', []), 'location %d' % i)
        names = []
        for line in loc.get('lines', []):
            f = idx('function_table', one(line, 'function_index'), 'location %d line' % i)
            names.append(s(one(f, 'name_strindex'), 'function'))
        ma = attrs(m.get('attribute_indices', []), 'mapping') if m else {}
        frames[i] = list(reversed(names))
        for n in names:
            print('F %s %s %s %s' % (n, la.get('profile.frame.type', '-'),
                                     s(one(m, 'filename_strindex'), 'mapping') if m else '-',
                                     ma.get('process.executable.build_id.gnu', '-')))
    for i, st in enumerate(tables['stack_table']):
        for li in st.get('location_indices', []):
            idx('location_table', li, 'stack %d' % i)
    for rp in data.get('resource_profiles', []):
        ra = {}
        for kv in one(rp, 'resource', {}).get('attributes', []):
            k = one(kv, 'key', '')
            if k in ra:
                fail('resource attribute %s twice' % k)
            v = one(kv, 'value', {})
            ra[k] = one(v, 'string_value', None) if 'string_value' in v else one(v, 'int_value')
        print('R ' + ','.join('%s=%s' % kv for kv in sorted(ra.items())))
        for sp in rp.get('scope_profiles', []):
            for p in sp.get('profiles', []):
                st = one(p, 'sample_type', {})
                t = '%s/%s' % (s(one(st, 'type_strindex'), 'type'), s(one(st, 'unit_strindex'), 'unit'))
                pt = one(p, 'period_type', {})
                print('P %s %s/%s %d' % (t, s(one(pt, 'type_strindex'), 'period type'),
                                         s(one(pt, 'unit_strindex'), 'period unit'),
                                         one(p, 'period')))
                for smp in p.get('samples', []):
                    sa = attrs(smp.get('attribute_indices', []), 'sample')
                    vals = smp.get('values', [])
                    if len(vals) != 1:
                        fail('a sample of %s has %d values' % (t, len(vals)))
                    stack = idx('stack_table', one(smp, 'stack_index'), 'sample')
                    names = []
                    for li in reversed(stack.get('location_indices', [])):
                        names += frames[li]
                    print('S %s %s %d' % (t, ';'.join(names), vals[0]))
                    print('A %s %s %d' % (','.join('%s=%s' % kv for kv in sorted(sa.items())),
                                          ';'.join(names), vals[0]))


def main():
    if len(sys.argv) == 1:
        check(sys.stdin.read())
        return
    # many decoded messages in one run: "= FILE" before each one's lines
    for path in sys.argv[1:]:
        print('= ' + path)
        with open(path, encoding='utf-8') as f:
            check(f.read())


main()
