#!/usr/bin/env python3
"""Records one tool-call turn through `seedline serve`, using only the Python standard library.

The server speaks JSON-RPC 2.0 over stdin/stdout, one JSON message per line. `session/record`
numbers seqs, turns and steps, assembles the assistant message from the streamed chunks and
pairs the tool result with its call, so the client only says what happened:

    python3 examples/python/record_turn.py --store sqlite:/tmp/demo.db

Prints one line per stage; exits 1 when the server answers an unexpected error.
"""

import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEFAULT_SERVER = os.path.join(ROOT, "dist", "src", "cli", "main.js")


class RpcError(Exception):
    """An error response: `code` is the string clients match on (error.data.code)."""

    def __init__(self, error):
        data = error.get("data") or {}
        super().__init__(error.get("message", ""))
        self.code = data.get("code", str(error.get("code")))
        self.data = data


class Server:
    """A spawned `seedline serve` and a request/response helper over its stdio."""

    def __init__(self, server, store):
        self.process = subprocess.Popen(
            ["node", server, "serve", "--store", store],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            encoding="utf-8",
        )
        self.next_id = 0

    def call(self, method, params):
        self.next_id += 1
        request = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        while True:
            line = self.process.stdout.readline()
            if not line:
                raise RuntimeError("the server closed its output")
            message = json.loads(line)
            if message.get("id") != self.next_id:
                continue  # a notification (session/events) or another answer
            if "error" in message:
                raise RpcError(message["error"])
            return message["result"]

    def close(self):
        self.process.stdin.close()
        return self.process.wait(timeout=30)


def run_tool(name, arguments):
    """The example's one tool: counts the words of a text."""
    if name != "word_count":
        return f"unknown tool {name}", True
    return str(len(json.loads(arguments)["text"].split())), False


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", required=True, help="store URL, e.g. sqlite:/tmp/demo.db")
    parser.add_argument("--server", default=DEFAULT_SERVER, help="path to dist/src/cli/main.js")
    parser.add_argument("--session-id", default="python-example")
    args = parser.parse_args()
    sid = args.session_id

    server = Server(args.server, args.store)
    try:
        server.call("session/create", {"sessionId": sid, "cwd": os.getcwd()})

        # Round trip 1: the turn opens, the model streams a sentence and a tool call, and finishes.
        arguments = json.dumps({"text": "the quick brown fox"})
        state = server.call("session/record", {"sessionId": sid, "ops": [
            {"op": "turn_start", "prompt": "How many words are in 'the quick brown fox'?"},
            {"op": "step_start"},
            {"op": "chunks", "chunks": [
                {"type": "text-delta", "index": 0, "text": "Let me count."},
                {"type": "tool-call-delta", "index": 1, "id": "call-1",
                 "name": "word_count", "argumentsDelta": arguments},
                {"type": "usage", "usage": {"inputTokens": 21, "outputTokens": 9}},
                {"type": "finish", "reason": {"kind": "tool-calls"}},
            ]},
        ]})
        calls = state["pendingToolCalls"]
        print("pending tool calls:", json.dumps([c["callId"] + " " + c["name"] for c in calls]))

        # Round trip 2: the results, the step's end, the answer step, the turn's end.
        ops = []
        for call in calls:
            output, failed = run_tool(call["name"], call["arguments"])
            ops.append({"op": "tool_result", "callId": call["callId"],
                        "content": output, "isError": failed})
        ops += [
            {"op": "step_end"},
            {"op": "step_start"},
            {"op": "chunks", "chunks": [
                {"type": "text-delta", "index": 0, "text": "There are 4 words."},
                {"type": "finish", "reason": {"kind": "stop"}},
            ]},
            {"op": "step_end"},
            {"op": "turn_end"},
        ]
        state = server.call("session/record", {"sessionId": sid, "ops": ops})
        print(f"recorded turn {state['lastTurn']}: nextSeq={state['nextSeq']}")

        # An op out of order is refused and stores nothing.
        try:
            server.call("session/record", {"sessionId": sid, "ops": [{"op": "step_start"}]})
        except RpcError as error:
            print(f"refused: {error.code} expected {error.data['expected']}")

        # Read it back: the events, the derived messages, the replay script.
        events = server.call("session/read", {"sessionId": sid})["events"]
        print("events:", " ".join(e["type"] for e in events))
        messages = server.call("session/messages", {"sessionId": sid})["messages"]
        print("messages:", " ".join(m["role"] for m in messages))
        script = server.call("replay/script", {"sessionId": sid})
        print("replay entries:", " ".join(e["kind"] for e in script["entries"]))
    except RpcError as error:
        print(f"error: {error.code}: {error}", file=sys.stderr)
        server.close()
        return 1
    return server.close()


if __name__ == "__main__":
    sys.exit(main())
