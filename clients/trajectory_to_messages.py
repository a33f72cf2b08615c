#!/usr/bin/env python3
"""clients/trajectory_to_messages.py: a Vitrine trajectory archive (GET
/v1/sessions/{id}/trajectory, docs/trajectory.md) -> a model history that
replays it, for fine-tuning and evaluation pipelines. Standard library only.

    trajectory_to_messages.py trajectory.tar [-o out.json]
        An Anthropic Messages-API request body without its model: {"tools":
        [the computer tool, sized to the screen], "messages": [...]}, one
        assistant message with a `computer` tool_use block per step and one
        user message with its tool_result (the step's image as base64, the
        error as is_error text).
    trajectory_to_messages.py trajectory.tar --openai
        An OpenAI Responses-style input list: a computer_call item per step
        and its computer_call_output (the image as a data: URL).

Actions sent in the target's own dialect are kept as sent (less the Vitrine
fields: id, dialect, screenshot, coordinate_space, screenshot_width and
_height); the others are translated from their name, fields and the screen
coordinates the gateway resolved them to (so translated coordinates are
screen pixels). A step whose action cannot be translated (it was not JSON,
or names nothing the target has) keeps its raw action in the input, so
there is still exactly one call per step.
"""

import argparse
import base64
import json
import sys
import tarfile

MEDIA_TYPES = {"jpeg": "image/jpeg", "png": "image/png"}
VITRINE_FIELDS = ("id", "dialect", "screenshot", "coordinate_space", "screenshot_width",
                  "screenshot_height")


def read_archive(path):
    """(meta, steps, images by name) of a trajectory archive."""
    with tarfile.open(path, "r:") as tar:
        files = {m.name: tar.extractfile(m).read() for m in tar.getmembers() if m.isfile()}
    meta = json.loads(files["meta.json"])
    steps = [json.loads(line) for line in files["trajectory.jsonl"].decode().splitlines()
             if line.strip()]
    return meta, steps, files


def media_type(name):
    return MEDIA_TYPES["png" if name.endswith(".png") else "jpeg"]


def stripped(action):
    return {k: v for k, v in action.items() if k not in VITRINE_FIELDS and v is not None}


def keys_list(keys):
    """A key field ("ctrl+a" or ["ctrl", "a"]) as a list of key names."""
    if isinstance(keys, list):
        return [str(k) for k in keys]
    return [k for k in str(keys or "").replace(" ", "+").split("+") if k]


def canonical(step):
    """The step's action as (kind, fields) in screen pixels, from whatever
    dialect it came in; None when it names nothing known."""
    a = step.get("action") if isinstance(step.get("action"), dict) else None
    name = step.get("name")
    if a is None or name is None:
        return None
    c = step.get("coordinates") or {}
    point, path = c.get("point"), c.get("path")
    d = step.get("dialect")
    if d == "anthropic":
        btn = {"left_click": "left", "right_click": "right", "middle_click": "middle",
               "double_click": "left", "triple_click": "left"}
        if name in btn:
            return ("click", {"point": point, "button": btn[name],
                              "count": {"double_click": 2, "triple_click": 3}.get(name, 1)})
        if name == "scroll":
            n = int(a.get("scroll_amount") or 3)
            dx, dy = {"up": (0, -n), "down": (0, n), "left": (-n, 0), "right": (n, 0)}.get(
                a.get("scroll_direction"), (0, n))
            return ("scroll", {"point": point, "dx": dx, "dy": dy})
        if name == "key":
            return ("key", {"keys": keys_list(a.get("text"))})
        if name == "type":
            return ("type", {"text": a.get("text", "")})
        if name == "mouse_move":
            return ("move", {"point": point})
        if name == "left_click_drag":
            return ("drag", {"path": path})
        if name == "wait":
            return ("wait", {"seconds": a.get("duration", 1)})
        if name in ("screenshot", "cursor_position", "zoom", "hold_key",
                    "left_mouse_down", "left_mouse_up"):
            return (name, {"point": point, "region": c.get("region"), "raw": a})
        return None
    if d == "openai":
        if name in ("click", "double_click"):
            return ("click", {"point": point, "button": a.get("button", "left"),
                              "count": 2 if name == "double_click" else 1})
        if name == "scroll":
            return ("scroll", {"point": point, "dx": round((a.get("scroll_x") or 0) / 100),
                               "dy": round((a.get("scroll_y") or 0) / 100)})
        if name == "keypress":
            return ("key", {"keys": keys_list(a.get("keys"))})
        if name == "type":
            return ("type", {"text": a.get("text", "")})
        if name == "move":
            return ("move", {"point": point})
        if name == "drag":
            return ("drag", {"path": path})
        if name == "wait":
            return ("wait", {"seconds": 1})
        if name == "screenshot":
            return ("screenshot", {})
        return None
    # Vitrine's own dialect (and E2B's names)
    if name in ("click", "left_click", "right_click", "middle_click", "double_click",
                "triple_click"):
        button = a.get("button") or {"right_click": "right", "middle_click": "middle"}.get(
            name, "left")
        count = a.get("count") or {"double_click": 2, "triple_click": 3}.get(name, 1)
        return ("click", {"point": point, "button": button, "count": count})
    if name == "scroll":
        if a.get("direction"):
            n = int(a.get("amount") or 1)
            dx, dy = {"up": (0, -n), "down": (0, n), "left": (-n, 0), "right": (n, 0)}[
                a["direction"]]
        else:
            dx, dy = int(a.get("dx") or 0), int(a.get("dy") or 0)
        return ("scroll", {"point": point, "dx": dx, "dy": dy})
    if name in ("key", "press"):
        return ("key", {"keys": keys_list(a.get("keys"))})
    if name in ("type", "write"):
        return ("type", {"text": a.get("text", "")})
    if name in ("move", "move_mouse", "mouse_move"):
        return ("move", {"point": point})
    if name == "drag":
        return ("drag", {"path": path})
    if name == "wait":
        return ("wait", {"seconds": (a.get("duration_ms") or 1000) / 1000})
    if name in ("screenshot", "cursor_position", "zoom"):
        return (name, {"point": point, "region": c.get("region"), "raw": a})
    return None


def anthropic_input(step):
    a = step.get("action")
    if step.get("dialect") == "anthropic" and isinstance(a, dict):
        return stripped(a)
    can = canonical(step)
    if can is None:
        return stripped(a) if isinstance(a, dict) else {"text": step.get("action_text")}
    kind, f = can
    p = f.get("point")
    if kind == "click":
        name = {2: "double_click", 3: "triple_click"}.get(f["count"]) or \
            {"right": "right_click", "middle": "middle_click", "wheel": "middle_click"}.get(
                f["button"], "left_click")
        return dict({"action": name}, **({"coordinate": p} if p else {}))
    if kind == "scroll":
        dx, dy = f["dx"], f["dy"]
        direction = ("down" if dy > 0 else "up") if dy else ("right" if dx > 0 else "left")
        out = {"action": "scroll", "scroll_direction": direction,
               "scroll_amount": abs(dy or dx) or 1}
        return dict(out, **({"coordinate": p} if p else {}))
    if kind == "key":
        return {"action": "key", "text": "+".join(f["keys"])}
    if kind == "type":
        return {"action": "type", "text": f["text"]}
    if kind == "move":
        return {"action": "mouse_move", "coordinate": p}
    if kind == "drag":
        return {"action": "left_click_drag", "start_coordinate": f["path"][0],
                "coordinate": f["path"][-1]}
    if kind == "wait":
        return {"action": "wait", "duration": f["seconds"]}
    if kind == "zoom" and f.get("region"):
        r = f["region"]
        return {"action": "zoom", "region": [r["x"], r["y"], r["x"] + r["width"],
                                             r["y"] + r["height"]]}
    return {"action": kind}


def openai_action(step):
    a = step.get("action")
    if step.get("dialect") == "openai" and isinstance(a, dict):
        return stripped(a)
    can = canonical(step)
    if can is None:
        return stripped(a) if isinstance(a, dict) else {"text": step.get("action_text")}
    kind, f = can
    p = f.get("point") or [0, 0]
    if kind == "click":
        if f["count"] == 2:
            return {"type": "double_click", "x": p[0], "y": p[1]}
        return {"type": "click", "x": p[0], "y": p[1],
                "button": {"middle": "wheel"}.get(f["button"], f["button"])}
    if kind == "scroll":
        return {"type": "scroll", "x": p[0], "y": p[1], "scroll_x": f["dx"] * 100,
                "scroll_y": f["dy"] * 100}
    if kind == "key":
        return {"type": "keypress", "keys": f["keys"]}
    if kind == "type":
        return {"type": "type", "text": f["text"]}
    if kind == "move":
        return {"type": "move", "x": p[0], "y": p[1]}
    if kind == "drag":
        return {"type": "drag", "path": [{"x": x, "y": y} for x, y in f["path"]]}
    if kind == "wait":
        return {"type": "wait"}
    return {"type": kind}


def error_text(step):
    e = (step.get("result") or {}).get("error") or {}
    return f"{e.get('code', 'error')}: {e.get('message', '')} (status {step.get('status')})"


def to_anthropic(meta, steps, files):
    messages = []
    for st in steps:
        tid = f"toolu_vitrine_{st['step']:06d}"
        messages.append({"role": "assistant", "content": [
            {"type": "tool_use", "id": tid, "name": "computer", "input": anthropic_input(st)}]})
        result = {"type": "tool_result", "tool_use_id": tid, "content": []}
        if st.get("status") != 200:
            result["is_error"] = True
            result["content"].append({"type": "text", "text": error_text(st)})
        elif (st.get("result") or {}).get("result") is not None:  # cursor_position
            result["content"].append({"type": "text",
                                      "text": json.dumps(st["result"]["result"])})
        if st.get("image"):
            result["content"].append({"type": "image", "source": {
                "type": "base64", "media_type": media_type(st["image"]),
                "data": base64.b64encode(files[st["image"]]).decode()}})
        messages.append({"role": "user", "content": [result]})
    screen = meta.get("screen") or {}
    tool = {"type": "computer_20250124", "name": "computer",
            "display_width_px": screen.get("width"), "display_height_px": screen.get("height")}
    return {"tools": [tool], "messages": messages}


def to_openai(meta, steps, files):
    items, last_url = [], None
    for st in steps:
        cid = f"call_vitrine_{st['step']:06d}"
        items.append({"type": "computer_call", "call_id": cid, "action": openai_action(st),
                      "pending_safety_checks": [], "status": "completed"})
        if st.get("image"):
            last_url = (f"data:{media_type(st['image'])};base64,"
                        + base64.b64encode(files[st["image"]]).decode())
        # computer_call_output has no error form: a step without an image of
        # its own shows the screen as last seen.
        items.append({"type": "computer_call_output", "call_id": cid,
                      "output": {"type": "computer_screenshot", "image_url": last_url}})
    return items


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("archive", help="a trajectory .tar (GET /v1/sessions/{id}/trajectory)")
    ap.add_argument("--openai", action="store_true",
                    help="an OpenAI Responses computer_call list instead")
    ap.add_argument("-o", "--output", help="write here instead of stdout")
    args = ap.parse_args(argv)
    meta, steps, files = read_archive(args.archive)
    out = to_openai(meta, steps, files) if args.openai else to_anthropic(meta, steps, files)
    text = json.dumps(out, indent=1)
    if args.output:
        with open(args.output, "w") as f:
            f.write(text + "\n")
    else:
        sys.stdout.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
