#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# bad_debuginfod: an HTTP server that answers every debuginfod request
# badly, for the tests of the fetcher's limits.
#   bad_debuginfod.py MODE PORTFILE
# MODE: garbage (a 200 with 64 KB that are not ELF), endless (a 200 that
# never ends, sent as fast as the client takes it), slow (a 200 that never
# ends, 1 KB every 100 ms). The port it listens on (on 127.0.0.1, chosen
# by the kernel) is written to PORTFILE once it listens.
import http.server
import os
import sys
import time


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def do_GET(self):
        mode = self.server.mode
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        if mode == "garbage":
            body = b"not an ELF file\n" * 4096
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        # no length: the body ends when the connection does, never
        self.send_header("Connection", "close")
        self.end_headers()
        chunk = b"\0" * (65536 if mode == "endless" else 1024)
        try:
            while True:
                self.wfile.write(chunk)
                if mode == "slow":
                    self.wfile.flush()
                    time.sleep(0.1)
        except (BrokenPipeError, ConnectionResetError):
            pass


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True


def main():
    mode, portfile = sys.argv[1], sys.argv[2]
    srv = Server(("127.0.0.1", 0), Handler)
    srv.mode = mode
    tmp = portfile + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % srv.server_address[1])
    os.rename(tmp, portfile)
    srv.serve_forever()


if __name__ == "__main__":
    main()
