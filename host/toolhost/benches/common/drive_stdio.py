"""Drives a release `toolhost serve --stdio` through N `greet` calls of the
`hello` plugin, one in flight, for profilers that wrap the server (the
counts in BENCHMARKS.md: run it at two N and take the difference, so that
start-up cancels out).

usage: python3 drive_stdio.py CONFIG N [WRAPPER...]
  e.g. python3 host/toolhost/benches/common/drive_stdio.py traces.toml 1100 \
         valgrind --tool=callgrind --callgrind-out-file=cg.1100

Run from the repository's root after `plugins/build hello` and
`cargo build --release -p toolhost`. Prints the last call's answer.
"""
import json
import subprocess
import sys

config, calls = sys.argv[1], int(sys.argv[2])
command = sys.argv[3:] + [
    "target/release/toolhost", "serve", "--stdio", "--config", config,
    "--plugin", "target/plugins/wasm32-wasip2/plugin/hello.wasm",
    "--cache-dir", "target/bench-cache",
]
server = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL, text=True, bufsize=1)


def send(message):
    server.stdin.write(json.dumps(message) + "\n")
    server.stdin.flush()
    if "id" in message:
        return server.stdout.readline()
    return None


send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {},
    "clientInfo": {"name": "drive", "version": "0"}}})
send({"jsonrpc": "2.0", "method": "notifications/initialized"})
answer = None
for i in range(calls):
    answer = send({"jsonrpc": "2.0", "id": i + 1, "method": "tools/call",
                   "params": {"name": "greet", "arguments": {"name": "Ada"}}})
print(answer.strip() if answer else "no answer")
server.stdin.close()
server.wait()
