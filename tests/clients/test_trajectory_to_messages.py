"""tests/clients/test_trajectory_to_messages.py: the trajectory converter
(clients/trajectory_to_messages.py) on an archive made here in the format of
docs/trajectory.md (no gateway needed): one call per step in both forms,
actions in the target's dialect kept less Vitrine's fields, others translated
from their screen coordinates, errors and images where they belong.

Run from the repository root:
    python3 -m unittest discover -s tests/clients -v
"""

import base64
import io
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SCRIPT = os.path.join(ROOT, "clients", "trajectory_to_messages.py")
PNG = b"\x89PNG\r\n\x1a\n" + b"fake"
JPEG = b"\xff\xd8\xff" + b"fake"


def step(n, dialect, name, action, coordinates=None, status=200, result=None, image=None,
         source=None):
    return {"step": n, "received_ms": 1, "finished_ms": 2, "channel": "http",
            "dialect": dialect, "name": name, "action": action, "coordinates": coordinates,
            "status": status, "result": result or {"ok": True, "action": name},
            "image": image, "image_source": source}


STEPS = [
    step(1, "anthropic", "left_click",
         {"action": "left_click", "coordinate": [10, 20], "id": "a", "screenshot": True},
         {"point": [10, 20]}, image="images/000001.png", source="action"),
    step(2, "openai", "drag", {"type": "drag", "path": [{"x": 1, "y": 2}, {"x": 3, "y": 4}]},
         {"path": [[1, 2], [3, 4]]}, image="images/000002.jpeg", source="screenshot"),
    step(3, "vitrine", "scroll", {"action": "scroll", "x": 5, "y": 6, "dy": 2},
         {"point": [5, 6]}),
    step(4, None, None, {"action": "bogus"}, status=400,
         result={"error": {"code": "unknown_action", "message": "no such action"}}),
    dict(step(5, None, None, None, status=400,
              result={"error": {"code": "invalid_json", "message": "not JSON"}}),
         action_text="not json"),
    step(6, "vitrine", "cursor_position", {"action": "cursor_position"},
         result={"ok": True, "action": "cursor_position", "result": {"x": 1, "y": 2}}),
]


def make_archive(path):
    meta = {"format": "vitrine-trajectory", "version": 1, "session": "s",
            "screen": {"width": 1280, "height": 800}, "steps": len(STEPS), "images": 2,
            "dropped": 0}
    members = [("meta.json", json.dumps(meta).encode()),
               ("trajectory.jsonl", "".join(json.dumps(s) + "\n" for s in STEPS).encode()),
               ("images/000001.png", PNG), ("images/000002.jpeg", JPEG)]
    with tarfile.open(path, "w", format=tarfile.USTAR_FORMAT) as tar:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))


def convert(path, *args):
    out = subprocess.run([sys.executable, SCRIPT, path, *args], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)


class TrajectoryToMessages(unittest.TestCase):
    def setUp(self):
        fd, self.path = tempfile.mkstemp(suffix=".tar")
        os.close(fd)
        make_archive(self.path)

    def tearDown(self):
        os.unlink(self.path)

    def test_anthropic(self):
        out = convert(self.path)
        self.assertEqual(out["tools"][0]["display_width_px"], 1280)
        msgs = out["messages"]
        self.assertEqual(len(msgs), 2 * len(STEPS))
        uses = [m["content"][0] for m in msgs if m["role"] == "assistant"]
        results = [m["content"][0] for m in msgs if m["role"] == "user"]
        self.assertEqual([u["type"] for u in uses], ["tool_use"] * len(STEPS))
        self.assertEqual([r["tool_use_id"] for r in results], [u["id"] for u in uses])
        # kept as sent, less Vitrine's fields
        self.assertEqual(uses[0]["input"], {"action": "left_click", "coordinate": [10, 20]})
        # translated from the screen coordinates
        self.assertEqual(uses[1]["input"], {"action": "left_click_drag",
                                            "start_coordinate": [1, 2], "coordinate": [3, 4]})
        self.assertEqual(uses[2]["input"], {"action": "scroll", "scroll_direction": "down",
                                            "scroll_amount": 2, "coordinate": [5, 6]})
        self.assertEqual(uses[3]["input"], {"action": "bogus"})
        self.assertEqual(uses[4]["input"], {"text": "not json"})
        img = results[0]["content"][-1]
        self.assertEqual(img["source"]["media_type"], "image/png")
        self.assertEqual(base64.b64decode(img["source"]["data"]), PNG)
        self.assertEqual(results[1]["content"][-1]["source"]["media_type"], "image/jpeg")
        self.assertTrue(results[3]["is_error"])
        self.assertIn("unknown_action", results[3]["content"][0]["text"])
        self.assertNotIn("is_error", results[0])
        self.assertEqual(json.loads(results[5]["content"][0]["text"]), {"x": 1, "y": 2})

    def test_openai(self):
        items = convert(self.path, "--openai")
        calls = [i for i in items if i["type"] == "computer_call"]
        outs = [i for i in items if i["type"] == "computer_call_output"]
        self.assertEqual(len(calls), len(STEPS))
        self.assertEqual([o["call_id"] for o in outs], [c["call_id"] for c in calls])
        self.assertEqual(calls[0]["action"], {"type": "click", "x": 10, "y": 20,
                                              "button": "left"})
        self.assertEqual(calls[1]["action"]["type"], "drag")  # kept as sent
        self.assertEqual(calls[2]["action"], {"type": "scroll", "x": 5, "y": 6, "scroll_x": 0,
                                              "scroll_y": 200})
        self.assertTrue(outs[0]["output"]["image_url"].startswith("data:image/png;base64,"))
        # no image of its own: the screen as last seen
        self.assertEqual(outs[2]["output"]["image_url"], outs[1]["output"]["image_url"])


if __name__ == "__main__":
    unittest.main()
