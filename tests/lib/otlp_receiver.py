#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""A loopback OTLP/HTTP receiver for the tests: python3 otlp_receiver.py DIR [PORT]

Listens on 127.0.0.1:PORT (0: any free port, written to DIR/port), answers
every POST 200 with an empty ExportProfilesServiceResponse, and keeps each
request as DIR/N.req (method, path and headers, one per line, names lower
case) and DIR/N.body (the body as sent).  N counts on from the requests
already in DIR, so a second receiver on the same directory adds to them.
"""
import http.server
import os
import sys

out = sys.argv[1]
port = int(sys.argv[2]) if len(sys.argv) > 2 else 0


class Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        n = len([f for f in os.listdir(out) if f.endswith('.req')])
        body = self.rfile.read(int(self.headers.get('Content-Length', 0)))
        with open(os.path.join(out, '%d.body' % n), 'wb') as f:
            f.write(body)
        with open(os.path.join(out, '%d.req.tmp' % n), 'w') as f:
            f.write('%s %s\n' % (self.command, self.path))
            for k, v in self.headers.items():
                f.write('%s: %s\n' % (k.lower(), v))
        os.rename(os.path.join(out, '%d.req.tmp' % n), os.path.join(out, '%d.req' % n))
        self.send_response(200)
        self.send_header('Content-Type', 'application/x-protobuf')
        self.send_header('Content-Length', '0')
        self.end_headers()

    def log_message(self, *args):
        pass


server = http.server.HTTPServer(('127.0.0.1', port), Handler)
with open(os.path.join(out, 'port.tmp'), 'w') as f:
    f.write('%d\n' % server.server_address[1])
os.rename(os.path.join(out, 'port.tmp'), os.path.join(out, 'port'))
server.serve_forever()
