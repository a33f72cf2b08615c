#!/usr/bin/env python3
"""agent_loop.py: the tool-execution half of a computer-use agent loop.

A real loop alternates: call the model, execute the computer-use tool calls it
returns, send the results back, repeat (vitrine_client.toolset's docstring and
the README show the whole loop with Claude). This example does the middle step
against a Vitrine session, without calling any model: it reads recorded model
output from a JSON file or stdin and prints one tool result per call, one JSON
object per line, in the vendor's own format:

  - an Anthropic Messages response (or its content blocks) with tool_use
    blocks of Claude's computer toolset (computer_toolset_20260801: named
    after its members, "left_click", "zoom", ..., toolset_name "computer"):
    each response's calls go to the gateway as one turn, which runs them in
    order, stops at the first failure, scales screenshots to the model's
    image limits and maps coordinates back; its tool_result blocks are
    printed as they are;
  - tool_use blocks of the older `computer` tool (computer_20251124, with
    "action"): each runs with a settled screenshot, printed as
    {"type": "tool_result", "tool_use_id": ..., "content": [{"type":
    "image", "source": {"type": "base64", "media_type": "image/jpeg",
    "data": ...}}]};
  - OpenAI Responses output (or its items) with computer_call items:
    {"type": "computer_call_output", "call_id": ..., "output":
    {"type": "computer_screenshot", "image_url": "data:image/jpeg;base64,..."}}

Those lines are what goes into the next model request (Anthropic: the content
of a user message; OpenAI: input items). Action inputs are passed to the
gateway verbatim; it understands both vendors' dialects.

    python3 agent_loop.py recorded.json                 # new desktop session
    python3 agent_loop.py --session s_123 recorded.json
    python3 agent_loop.py --image tiny --keep < recorded.json

With --screenshot-size WxH the screenshots are scaled to that size and the
model's coordinates are taken in that space, as when the tool was declared
with display_width_px/display_height_px smaller than the screen.
"""

import argparse
import base64
import json
import os
import sys

try:  # the installed package (pip install ./clients/python) ...
    from vitrine_client import VitrineClient, VitrineError
    from vitrine_client.toolset import TOOLSET_NAME, MEMBERS
except ImportError:  # ... or the source tree next to this example
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    from vitrine_client import VitrineClient, VitrineError
    from vitrine_client.toolset import TOOLSET_NAME, MEMBERS

MEDIA_TYPES = {"jpeg": "image/jpeg", "png": "image/png"}


def tool_calls(doc):
    """Yields ("anthropic", block) and ("openai", item) for every computer-use
    call in doc: a response object, a list of blocks/items, or a list of
    responses. Other blocks and items (text, reasoning, other tools) are skipped."""
    if isinstance(doc, list):
        for x in doc:
            yield from tool_calls(x)
        return
    if not isinstance(doc, dict):
        return
    if doc.get("type") == "tool_use":
        ts = doc.get("toolset_name")
        if ts == TOOLSET_NAME or (ts is None and doc.get("name") in MEMBERS):
            yield "toolset", doc
        elif doc.get("name") == "computer":
            yield "anthropic", doc
        else:
            print(f"agent_loop: skipping tool_use of tool {doc.get('name')!r}", file=sys.stderr)
    elif doc.get("type") == "computer_call":
        yield "openai", doc
    else:
        for key in ("content", "output"):  # a Messages or a Responses response
            if isinstance(doc.get(key), list):
                yield from tool_calls(doc[key])
                yield "end_of_turn", None


def turns(doc):
    """tool_calls(doc) with each response's toolset calls gathered into one
    ("toolset", [blocks]) turn, in place of its first call."""
    turn = []
    for vendor, call in tool_calls(doc):
        if vendor == "toolset":
            turn.append(call)
            continue
        if turn:
            yield "toolset", turn
            turn = []
        if vendor != "end_of_turn":
            yield vendor, call
    if turn:
        yield "toolset", turn


class Executor:
    """Runs actions on one session, each with a settled screenshot."""

    def __init__(self, vc, session_id, fmt, size):
        self.vc, self.session_id, self.fmt, self.size = vc, session_id, fmt, size

    def shot_opts(self):
        opts = {"format": self.fmt}
        if self.size:
            opts["width"], opts["height"] = self.size
        return opts

    def run(self, action, dialect, with_screenshot=True):
        """Executes one action; returns the reply (VitrineError on failure)."""
        body = dict(action, dialect=dialect)
        if self.size:
            body.update(coordinate_space="screenshot", screenshot_width=self.size[0],
                        screenshot_height=self.size[1])
        return self.vc.act(self.session_id, body,
                           screenshot=self.shot_opts() if with_screenshot else None)

    def current_screen(self):
        """A screenshot without acting, as an act()-style screenshot dict."""
        s = self.vc.screenshot(self.session_id, **self.shot_opts())
        return {"format": s.format, "data": base64.b64encode(s.data).decode()}


def anthropic_result(ex, block):
    """Executes a tool_use block; returns its tool_result block."""
    try:
        reply = ex.run(block.get("input") or {}, "anthropic")
    except VitrineError as e:
        return {"type": "tool_result", "tool_use_id": block["id"], "is_error": True,
                "content": [{"type": "text", "text": f"{e.code}: {e.message}"}]}
    content = []
    if reply.get("result") is not None:  # cursor_position and the like
        content.append({"type": "text", "text": json.dumps(reply["result"])})
    shot = reply.get("screenshot") or ex.current_screen()
    content.append({"type": "image", "source": {
        "type": "base64", "media_type": MEDIA_TYPES[shot["format"]], "data": shot["data"]}})
    return {"type": "tool_result", "tool_use_id": block["id"], "content": content}


def openai_result(ex, item, ack_safety_checks):
    """Executes a computer_call item (one action, or a batch in "actions");
    returns its computer_call_output item, or None when a pending safety check
    was not acknowledged (the call is then not executed)."""
    checks = item.get("pending_safety_checks") or []
    if checks and not ack_safety_checks:
        print(f"agent_loop: call {item['call_id']} has pending safety checks "
              f"{[c.get('code') for c in checks]}; not executed (a person must confirm; "
              "--ack-safety-checks acknowledges them)", file=sys.stderr)
        return None
    actions = item.get("actions") or [item.get("action") or {}]
    shot = None
    for i, action in enumerate(actions):
        try:
            reply = ex.run(action, "openai", with_screenshot=i == len(actions) - 1)
            shot = reply.get("screenshot", shot)
        except VitrineError as e:
            # computer_call_output has no error form: report, and show the screen as it is.
            print(f"agent_loop: call {item['call_id']}: {e}", file=sys.stderr)
            shot = None
            break
    shot = shot or ex.current_screen()
    out = {"type": "computer_call_output", "call_id": item["call_id"], "output": {
        "type": "computer_screenshot",
        "image_url": f"data:{MEDIA_TYPES[shot['format']]};base64,{shot['data']}"}}
    if checks:
        out["acknowledged_safety_checks"] = checks
    return out


def parse_size(text):
    try:
        w, h = (int(v) for v in text.lower().split("x"))
        return w, h
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected WIDTHxHEIGHT, not {text!r}")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("file", nargs="?", default="-", help="recorded model output (default: stdin)")
    p.add_argument("--gateway", help="gateway URL (default $VITRINE_URL, else http://127.0.0.1:8080)")
    p.add_argument("--api-key-file", help="key file (default $VITRINE_API_KEY, else $VITRINE_HOME/api-key)")
    p.add_argument("--session", help="act on this session instead of creating one")
    p.add_argument("--image", default="desktop", help="image of the session to create")
    p.add_argument("--url", help="page the new session opens")
    p.add_argument("--keep", action="store_true", help="do not delete the session created")
    p.add_argument("--format", choices=["jpeg", "png"], default="jpeg")
    p.add_argument("--screenshot-size", type=parse_size, metavar="WxH",
                   help="the older computer tool's display size")
    p.add_argument("--max-long-edge", type=int, metavar="PX",
                   help="the toolset's image limit (default the gateway's: 2576)")
    p.add_argument("--ack-safety-checks", action="store_true",
                   help="acknowledge OpenAI pending safety checks (only after a person confirmed)")
    args = p.parse_args(argv)

    try:
        with (sys.stdin if args.file == "-" else open(args.file, encoding="utf-8")) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        print(f"agent_loop: cannot read tool calls from {args.file}: {e}", file=sys.stderr)
        return 2

    created = None
    status = 0
    try:
        vc = VitrineClient(url=args.gateway, api_key_file=args.api_key_file)
        session_id = args.session
        if not session_id:
            created = vc.create_session(image=args.image, url=args.url, wait=True)
            session_id = created["id"]
            if created["status"] != "ready":
                raise VitrineError(0, "not_ready", f"session {session_id} is {created['status']}: "
                                   f"{created.get('error', '')}")
            print(f"agent_loop: session {session_id} ready", file=sys.stderr)
        ex = Executor(vc, session_id, args.format, args.screenshot_size)
        for vendor, call in turns(doc):
            if vendor == "toolset":
                limits = {"max_long_edge": args.max_long_edge} if args.max_long_edge else None
                for result in vc.toolset_turn(session_id, call, image_limits=limits,
                                              image_format=args.format):
                    print(json.dumps(result), flush=True)
                continue
            if vendor == "anthropic":
                result = anthropic_result(ex, call)
            else:
                result = openai_result(ex, call, args.ack_safety_checks)
            if result is None:
                status = 1
                continue
            print(json.dumps(result), flush=True)
    except VitrineError as e:
        print(f"agent_loop: {e}", file=sys.stderr)
        status = 1
    finally:
        if created and not args.keep:
            try:
                vc.delete_session(created["id"])
            except VitrineError as e:
                print(f"agent_loop: cannot delete {created['id']}: {e}", file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main())
