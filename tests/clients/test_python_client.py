"""tests/clients/test_python_client.py: the Python client package
(clients/python, vitrine_client) and the agent loop example against a real
`vitrine serve` that this test starts on loopback with tiny guests, one at a
time: every call, the errors it raises, a turn of Claude's computer toolset
(scaled screenshots, cursor_position, zoom, a failure in the middle and the
fixed words after it, member configs), and the loop fed recorded Anthropic
(toolset and older computer tool) and OpenAI tool calls, whose results must
be in each vendor's format.

The package is installed first, offline, into a fresh venv (Debian's python3
with --system-site-packages, for its setuptools and wheel: pip install
--no-build-isolation --no-index, from a copy of clients/python so the tree
stays clean), and what is tested is that installed package.

Run from the repository root after `make` (VITRINE_BIN picks the binary):
    python3 -m unittest discover -s tests/clients -v
"""

import atexit
import base64
import glob
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
CLIENT_DIR = os.path.join(ROOT, "clients", "python")
EXAMPLES = os.path.join(CLIENT_DIR, "examples")


def install_package():
    """A fresh venv with clients/python installed in it, offline; returns
    (the venv's python, its site-packages). Raises on any failure."""
    venv = tempfile.mkdtemp(prefix="vitrine-py-venv-")
    atexit.register(shutil.rmtree, venv, True)
    # Debian's python3 has setuptools and wheel (python3-setuptools,
    # python3-wheel: deploy/install-deps.sh) for an offline build.
    base = "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) else sys.executable
    subprocess.run([base, "-m", "venv", "--system-site-packages", os.path.join(venv, "env")],
                   check=True, capture_output=True)
    src = os.path.join(venv, "src")
    shutil.copytree(CLIENT_DIR, src, ignore=shutil.ignore_patterns(
        "build", "*.egg-info", "__pycache__"))
    py = os.path.join(venv, "env", "bin", "python")
    p = subprocess.run([py, "-m", "pip", "install", "--no-build-isolation", "--no-index",
                        "--disable-pip-version-check", "--quiet", src],
                       capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"pip install ./clients/python failed:\n{p.stdout}{p.stderr}")
    site = glob.glob(os.path.join(venv, "env", "lib", "python3*", "site-packages"))[0]
    return py, site


VENV_PYTHON, SITE = install_package()
sys.path.insert(0, SITE)

from vitrine_client import VitrineClient, VitrineError  # noqa: E402
from vitrine_client.toolset import NOT_EXECUTED, TOOLSET_TYPE, answer_turn  # noqa: E402

JPEG_MAGIC = b"\xff\xd8\xff"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def png_size(data):
    """(width, height) of a PNG, from its IHDR chunk."""
    assert data[:8] == PNG_MAGIC and data[12:16] == b"IHDR", "not a PNG"
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


def jpeg_size(data):
    """(width, height) of a JPEG, from its first SOFn segment."""
    assert data[:3] == JPEG_MAGIC, "not a JPEG"
    i = 2
    while i + 9 <= len(data) and data[i] == 0xFF:
        m = data[i + 1]
        if 0xC0 <= m <= 0xCF and m not in (0xC4, 0xC8, 0xCC):
            return int.from_bytes(data[i + 7:i + 9], "big"), int.from_bytes(data[i + 5:i + 7], "big")
        i += 2 + int.from_bytes(data[i + 2:i + 4], "big")
    raise AssertionError("JPEG without a frame header")


class GatewayTest(unittest.TestCase):
    """Starts one gateway for the whole class; every test leaves no session."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="vitrine-py-")
        os.chmod(cls.tmp, 0o755)  # QEMU, as vitrine-qemu, must reach the run dirs below
        cls.key_file = os.path.join(cls.tmp, "api-key")
        cls.env = dict(os.environ, VITRINE_RUN=os.path.join(cls.tmp, "run"))
        cls.env.pop("VITRINE_API_KEY", None)
        binary = os.environ.get("VITRINE_BIN", os.path.join(ROOT, "build", "vitrine"))
        cls.server = subprocess.Popen(
            [binary, "serve", "--listen", "127.0.0.1:0", "--api-key-file", cls.key_file,
             "--state-dir", os.path.join(cls.tmp, "state"), "--on-stop", "kill",
             "--max-sessions", "2"],
            stdout=subprocess.PIPE, env=cls.env, text=True)
        line = cls.server.stdout.readline()
        prefix = "vitrine: listening on "
        if not line.startswith(prefix):
            cls.server.kill()
            cls.server.wait()
            raise RuntimeError(f"the gateway did not start: {line!r}")
        cls.url = line[len(prefix):].split()[0]
        with open(cls.key_file, encoding="utf-8") as f:
            cls.key = f.read().strip()
        cls.vc = VitrineClient(url=cls.url, api_key=cls.key)

    @classmethod
    def tearDownClass(cls):
        cls.server.send_signal(signal.SIGTERM)
        try:
            cls.server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            cls.server.kill()
            cls.server.wait()
        cls.server.stdout.close()
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def tearDown(self):
        for s in self.vc.list_sessions():  # a failed test must not leak a guest
            self.vc.delete_session(s["id"])

    def new_session(self):
        s = self.vc.create_session(image="tiny", width=800, height=600, wait=True)
        self.assertEqual(s["status"], "ready", s.get("error"))
        return s


class ClientTest(GatewayTest):
    def test_errors(self):
        with self.assertRaises(VitrineError) as cm:
            VitrineClient(url=self.url, api_key="wrong-key-wrong-key").list_sessions()
        self.assertEqual((cm.exception.status, cm.exception.code), (401, "unauthorized"))
        with self.assertRaises(VitrineError) as cm:
            self.vc.get_session("s_doesnotexist")
        self.assertEqual((cm.exception.status, cm.exception.code), (404, "not_found"))
        self.assertEqual(cm.exception.message, "no such session")
        with self.assertRaises(VitrineError) as cm:
            self.vc.create_session(image="tiny", width=99999)
        self.assertEqual((cm.exception.status, cm.exception.code), (400, "out_of_range"))
        with self.assertRaises(VitrineError) as cm:
            VitrineClient(url="http://127.0.0.1:1", api_key="k").list_sessions()
        self.assertEqual((cm.exception.status, cm.exception.code), (0, "unavailable"))
        self.assertIn("connection refused", cm.exception.message)
        with self.assertRaises(VitrineError) as cm:
            VitrineClient(url=self.url, api_key_file=os.path.join(self.tmp, "missing"))
        self.assertEqual(cm.exception.code, "no_api_key")

    def test_key_from_file_and_environment(self):
        self.assertEqual(VitrineClient(url=self.url, api_key_file=self.key_file).list_sessions(), [])
        old = os.environ.get("VITRINE_API_KEY")
        os.environ["VITRINE_API_KEY"] = self.key
        try:
            self.assertEqual(VitrineClient(url=self.url).list_sessions(), [])
        finally:
            if old is None:
                del os.environ["VITRINE_API_KEY"]
            else:
                os.environ["VITRINE_API_KEY"] = old

    def test_projects_and_keys(self):
        # No guest: a project whose quota allows no session is refused first.
        p = self.vc.create_project("py", quota={"sessions": 0, "vcpus": 4})
        self.assertEqual((p["name"], p["quota"]["sessions"], p["quota"]["vcpus"]), ("py", 0, 4))
        self.assertIn("py", [x["name"] for x in self.vc.list_projects()])
        made = self.vc.create_key(name="agent", project="py")
        self.assertEqual(made["project"], "py")
        self.assertTrue(made["key"].startswith("e2b_"))
        self.assertEqual([k["id"] for k in self.vc.list_keys(project="py")], [made["id"]])
        self.assertNotIn("key", self.vc.list_keys(project="py")[0])
        tenant = VitrineClient(url=self.url, api_key=made["key"])
        self.assertEqual(tenant.get_project("py")["keys"], 1)
        with self.assertRaises(VitrineError) as cm:
            tenant.list_projects()  # no admin right
        self.assertEqual(cm.exception.status, 403)
        with self.assertRaises(VitrineError) as cm:
            tenant.create_session(image="tiny")
        self.assertEqual((cm.exception.status, cm.exception.code), (429, "quota"))
        self.assertEqual(tenant.list_sessions(), [])
        self.assertEqual(tenant.usage()["sessions"], [])
        self.assertIn("projects", self.vc.usage(project="py"))
        p = self.vc.update_project("py", quota={"sessions": None}, allow_root=True)
        self.assertEqual((p["quota"]["sessions"], p["allow_root"]), (None, True))
        # Revoked through another project: not there, and still valid.
        self.vc.create_project("py2")
        with self.assertRaises(VitrineError) as cm:
            self.vc.revoke_key(made["id"], project="py2")
        self.assertEqual(cm.exception.status, 404)
        self.assertEqual(tenant.get_project("py")["name"], "py")
        self.assertEqual(self.vc.revoke_key(made["id"], project="py")["revoked"], True)
        with self.assertRaises(VitrineError) as cm:
            tenant.get_project("py")
        self.assertEqual(cm.exception.status, 401)
        admin = self.vc.create_key(name="ops")
        self.assertIsNone(admin.get("project"))
        self.assertEqual(self.vc.revoke_key(admin["id"])["revoked"], True)
        self.assertEqual(self.vc.delete_project("py")["deleted"], True)
        self.assertEqual(self.vc.delete_project("py2")["deleted"], True)
        with self.assertRaises(VitrineError) as cm:
            self.vc.get_project("py")
        self.assertEqual(cm.exception.status, 404)

    def test_session_lifecycle_and_tokens(self):
        s = self.new_session()
        sid = s["id"]
        self.assertEqual(s["width"], 800)
        self.assertEqual([x["id"] for x in self.vc.list_sessions()], [sid])
        self.assertEqual(self.vc.get_session(sid, wait=True)["status"], "ready")
        # The view token sees its session but cannot act on it.
        view = VitrineClient(url=self.url, api_key=s["tokens"]["view"])
        self.assertEqual(view.get_session(sid)["id"], sid)
        with self.assertRaises(VitrineError) as cm:
            view.act(sid, {"action": "left_click", "coordinate": [10, 10]})
        self.assertEqual(cm.exception.status, 403)
        control = VitrineClient(url=self.url, api_key=s["tokens"]["control"])
        reply = control.act(sid, {"action": "left_click", "coordinate": [10, 20], "id": "a1"})
        self.assertTrue(reply["ok"])
        self.assertEqual((reply["id"], reply["action"]), ("a1", "left_click"))
        with self.assertRaises(VitrineError) as cm:
            self.vc.act(sid, {"action": "teleport"})
        self.assertEqual((cm.exception.status, cm.exception.code), (400, "unknown_action"))
        # A minted token has its scopes and no more; revoked, it stops.
        minted = self.vc.mint_token(sid, ["view", "egress"], ttl_s=600)
        self.assertEqual(minted["scopes"], ["view", "egress"])
        self.assertIn(minted["id"], [t["id"] for t in self.vc.list_tokens(sid)])
        agent = VitrineClient(url=self.url, api_key=minted["token"])
        self.assertEqual(agent.egress(sid, ["example.org"])["allow"], ["example.org"])
        with self.assertRaises(VitrineError) as cm:
            control.egress(sid, ["*"])  # the control token cannot widen its rules
        self.assertEqual(cm.exception.status, 403)
        self.vc.revoke_token(sid, minted["id"])
        with self.assertRaises(VitrineError) as cm:
            agent.get_session(sid)
        self.assertEqual(cm.exception.status, 401)
        new_view = self.vc.rotate_token(sid, "view")
        self.assertEqual(VitrineClient(url=self.url, api_key=new_view).get_session(sid)["id"], sid)
        with self.assertRaises(VitrineError) as cm:
            view.get_session(sid)
        self.assertEqual(cm.exception.status, 401)
        self.assertEqual(self.vc.delete_session(sid), {"id": sid, "deleted": True})
        with self.assertRaises(VitrineError) as cm:
            self.vc.get_session(sid)
        self.assertEqual(cm.exception.status, 404)

    def test_guest_commands_files_and_egress(self):
        # The tiny guest runs vitrine-agent too (busybox); a command starts in
        # the desktop user's home unless given a cwd.
        s = self.vc.create_session(image="tiny", width=800, height=600, wait=True,
                                   egress=["allowed.test:8080"])
        sid = s["id"]
        r = self.vc.exec(sid, "pwd; id -u")
        self.assertEqual((r["exit_code"], r["stdout"]), (0, "/home/vitrine\n1000\n"))
        r = self.vc.exec(sid, "echo out; echo err >&2; exit 4", cwd="/")
        self.assertEqual((r["exit_code"], r["stdout"], r["stderr"]), (4, "out\n", "err\n"))
        every = bytes(range(256))
        r = self.vc.exec(sid, "cat", stdin=every, cwd="/")
        self.assertEqual(r["stdout"], every)  # came back base64, decoded
        r = self.vc.exec(sid, "/bin/echo", args=["a  b"], cwd="/", user="root")
        self.assertEqual(r["stdout"], "a  b\n")
        self.assertEqual(self.vc.upload(sid, "/tmp/x.bin", every)["size"], 256)
        self.assertEqual(self.vc.download(sid, "/tmp/x.bin"), every)
        with self.assertRaises(VitrineError) as cm:
            self.vc.download(sid, "/etc/passwd")
        self.assertEqual((cm.exception.status, cm.exception.code), (400, "path_not_allowed"))
        # Egress: the rules as given; a name outside them refused and logged.
        self.assertEqual(self.vc.egress(sid), {"allow": ["allowed.test:8080"]})
        r = self.vc.exec(sid, "wget -q -O - http://elsewhere.test/ 2>&1; echo rc=$?", cwd="/")
        self.assertIn("rc=1", r["stdout"])
        log = self.vc.egress_log(sid)["entries"]
        self.assertTrue(any(e["host"] == "elsewhere.test" and e["verdict"] == "denied"
                            and e["reason"] == "not_in_allowlist" for e in log), log)
        self.assertEqual(self.vc.egress(sid, allow=[]), {"allow": []})
        with self.assertRaises(VitrineError) as cm:
            self.vc.egress(sid, allow=["not a host"])
        self.assertEqual(cm.exception.status, 400)
        self.assertTrue(self.vc.cdp_url(sid).endswith(f"/v1/sessions/{sid}/cdp"))

    def test_pause_resume_fork_events_and_templates(self):
        name = f"py-{os.getpid()}"
        self.assertEqual(self.vc.create_template(name, image="tiny", width=800, height=600)
                         ["status"], "building")
        for _ in range(600):
            t = self.vc.get_template(name)
            if t["status"] != "building":
                break
            time.sleep(0.1)
        self.assertEqual(t["status"], "ready", t.get("error"))
        self.assertIn(name, [x["name"] for x in self.vc.list_templates()])
        try:
            s = self.vc.create_session(template=name, wait=True, idle_timeout_s=600,
                                       on_expiry="pause")
            sid = s["id"]
            self.assertEqual((s["status"], s["on_expiry"]), ("ready", "pause"))
            self.assertEqual(self.vc.pause(sid, mode="disk")["paused"], "disk")
            with self.assertRaises(VitrineError) as cm:
                self.vc.act(sid, {"action": "left_click", "coordinate": [5, 5]})
            self.assertEqual((cm.exception.status, cm.exception.code), (409, "session_paused"))
            self.assertEqual(self.vc.resume(sid)["status"], "ready")
            child = self.vc.fork(sid, wait=True)
            self.assertEqual((child["status"], child["forked_from"]), ("ready", sid))
            self.assertIn("control", child["tokens"])
            ev = self.vc.events(sid)
            types = [e["type"] for e in ev["events"]]
            self.assertIn("forked", types)
            self.assertEqual(ev["last"], ev["events"][-1]["seq"])
            self.assertEqual(self.vc.events(sid, after=ev["last"])["events"], [])
            with self.assertRaises(VitrineError) as cm:
                self.vc.delete_template(name)
            self.assertEqual(cm.exception.code, "template_in_use")
            self.vc.delete_session(child["id"])
            self.vc.delete_session(sid)
        finally:
            for s in self.vc.list_sessions():
                self.vc.delete_session(s["id"])
            self.vc.delete_template(name)
        with self.assertRaises(VitrineError) as cm:
            self.vc.get_template(name)
        self.assertEqual(cm.exception.status, 404)

    # Needs GET .../screenshot and screenshots in action replies.
    def test_screenshots(self):
        sid = self.new_session()["id"]
        shot = self.vc.screenshot(sid)
        self.assertEqual(shot.content_type, "image/jpeg")
        self.assertEqual(jpeg_size(shot.data), (800, 600))
        self.assertEqual((shot.width, shot.height, shot.screen), (800, 600, "800x600"))
        self.assertAlmostEqual(shot.scale, 1.0)
        shot = self.vc.screenshot(sid, format="png", width=400, height=300)
        self.assertEqual(shot.content_type, "image/png")
        self.assertEqual(png_size(shot.data), (400, 300))
        self.assertEqual((shot.width, shot.height), (400, 300))
        self.assertAlmostEqual(shot.scale, 0.5)
        path = os.path.join(self.tmp, "shot.png")
        shot.save(path)
        with open(path, "rb") as f:
            self.assertEqual(f.read(8), PNG_MAGIC)

        reply = self.vc.act(sid, {"type": "click", "button": "left", "x": 100, "y": 100},
                            screenshot={"format": "png", "width": 400, "height": 300})
        meta = reply["screenshot"]
        self.assertEqual((meta["format"], meta["width"], meta["height"]), ("png", 400, 300))
        self.assertEqual(png_size(VitrineClient.screenshot_bytes(reply)), (400, 300))
        reply = self.vc.act(sid, {"action": "mouse_move", "coordinate": [5, 5]}, screenshot=True)
        self.assertEqual(VitrineClient.screenshot_bytes(reply)[:3], JPEG_MAGIC)
        with self.assertRaises(VitrineError):
            VitrineClient.screenshot_bytes(self.vc.act(sid, {"action": "mouse_move",
                                                             "coordinate": [6, 6]}))


def text_of(result):
    """The text of a tool_result: its string content or first text block."""
    c = result["content"]
    return c if isinstance(c, str) else c[0]["text"]


def image_of(result):
    """(media_type, bytes) of a tool_result's image block."""
    src = result["content"][0]["source"]
    return src["media_type"], base64.b64decode(src["data"])


class ToolsetTest(GatewayTest):
    """A turn of Claude's computer toolset through the installed client."""

    def test_installed_and_typed(self):
        import vitrine_client
        self.assertTrue(vitrine_client.__file__.startswith(SITE), vitrine_client.__file__)
        self.assertTrue(os.path.exists(os.path.join(os.path.dirname(vitrine_client.__file__),
                                                    "py.typed")))

    def test_toolset_turn(self):
        sid = self.new_session()["id"]  # tiny: 800x600
        call = lambda i, name, **inp: {"type": "tool_use", "id": f"toolu_{i}", "name": name,
                                        "toolset_name": "computer", "input": inp}
        turn = {"role": "assistant", "content": [
            {"type": "text", "text": "Looking, then clicking."},
            call(1, "screenshot"),
            call(2, "left_click", coordinate=[399, 299]),
            call(3, "cursor_position"),
            call(4, "left_click", coordinate=[5000, 5]),
            call(5, "type", text="not typed"),
            call(6, "zoom", region=[0, 0, 200, 150]),
            {"type": "tool_use", "id": "toolu_bash", "name": "bash", "input": {"command": "ls"}},
        ]}
        # The model sees 400x300 screenshots of the 800x600 screen.
        msg = answer_turn(self.vc, sid, turn, image_limits={"max_long_edge": 400},
                          image_format="png")
        self.assertEqual(msg["role"], "user")
        results = msg["content"]
        self.assertEqual([r["tool_use_id"] for r in results],
                         [f"toolu_{i}" for i in range(1, 7)])
        for r in results:
            self.assertEqual((r["type"], r["toolset_name"]), ("tool_result", "computer"))
        media, data = image_of(results[0])
        self.assertEqual(media, "image/png")
        self.assertEqual(png_size(data), (400, 300))
        self.assertEqual(text_of(results[1]), "Clicked.")
        self.assertEqual(text_of(results[2]), "X=399,Y=299")  # in screenshot pixels
        self.assertTrue(results[3]["is_error"])
        self.assertIn("coordinate", text_of(results[3]))
        for r in results[4:]:
            self.assertTrue(r["is_error"])
            self.assertEqual(r["content"], NOT_EXECUTED)
        # zoom: [0, 0, 200, 150) of the 400x300 screenshot, its last pixel
        # (199, 149) being screen pixel (398, 298) (corners map to corners),
        # is the screen's top-left 399x299, captured at display resolution
        results = self.vc.toolset_turn(sid, [call(7, "zoom", region=[0, 0, 200, 150])],
                                       image_format="png")
        self.assertEqual(png_size(image_of(results[0])[1]), (399, 299))
        # the screenshot size is fixed for the session
        with self.assertRaises(VitrineError) as cm:
            self.vc.toolset_turn(sid, [call(8, "screenshot")],
                                 image_limits={"max_long_edge": 800})
        self.assertEqual((cm.exception.status, cm.exception.code), (409, "capture_fixed"))
        # a member the tool entry turns off is refused as that call's error
        results = self.vc.toolset_turn(sid, [call(9, "zoom", region=[0, 0, 10, 10]),
                                             call(10, "screenshot")],
                                       tool={"type": TOOLSET_TYPE,
                                             "configs": {"zoom": {"enabled": False}}})
        self.assertTrue(results[0]["is_error"])
        self.assertIn("disabled", text_of(results[0]))
        self.assertEqual(results[1]["content"], NOT_EXECUTED)


class AgentLoopTest(GatewayTest):
    """examples/agent_loop.py fed the recorded tool calls next to it."""

    def run_loop(self, recorded, *extra, stdin=None):
        cmd = [VENV_PYTHON, os.path.join(EXAMPLES, "agent_loop.py"), "--gateway", self.url,
               "--api-key-file", self.key_file, *extra]
        if recorded:
            cmd.append(os.path.join(EXAMPLES, recorded))
        p = subprocess.run(cmd, input=stdin, capture_output=True, text=True, timeout=600,
                           env=self.env)
        lines = [json.loads(line) for line in p.stdout.splitlines()]
        return p.returncode, lines, p.stderr

    def test_anthropic_tool_use(self):
        rc, results, err = self.run_loop("anthropic_tool_calls.json", "--image", "tiny")
        self.assertEqual(rc, 0, err)
        with open(os.path.join(EXAMPLES, "anthropic_tool_calls.json"), encoding="utf-8") as f:
            ids = [b["id"] for b in json.load(f)["content"] if b["type"] == "tool_use"]
        self.assertEqual([r["tool_use_id"] for r in results], ids)
        for r in results:
            self.assertEqual(r["type"], "tool_result")
            self.assertNotIn("is_error", r)
            image = r["content"][-1]
            self.assertEqual(image["type"], "image")
            self.assertEqual(image["source"]["type"], "base64")
            self.assertEqual(image["source"]["media_type"], "image/jpeg")
            self.assertEqual(base64.b64decode(image["source"]["data"])[:3], JPEG_MAGIC)
        self.assertEqual(self.vc.list_sessions(), [])  # the loop deleted its session

    def test_toolset_turn(self):
        rc, results, err = self.run_loop("anthropic_toolset_turn.json", "--image", "tiny")
        self.assertEqual(rc, 0, err)
        with open(os.path.join(EXAMPLES, "anthropic_toolset_turn.json"), encoding="utf-8") as f:
            ids = [b["id"] for b in json.load(f)["content"] if b["type"] == "tool_use"]
        self.assertEqual([r["tool_use_id"] for r in results], ids)
        for r in results:
            self.assertEqual((r["type"], r["toolset_name"]), ("tool_result", "computer"))
            self.assertNotIn("is_error", r)
        self.assertEqual(image_of(results[0])[0], "image/jpeg")
        self.assertEqual(jpeg_size(image_of(results[0])[1]), (1280, 800))  # 1:1
        self.assertEqual([text_of(r) for r in results[1:6]],
                         ["Clicked.", "Typed.", "Pressed Return.", "Scrolled down.",
                          "X=400,Y=300"])
        self.assertEqual(jpeg_size(image_of(results[6])[1]), (320, 200))
        self.assertEqual(self.vc.list_sessions(), [])

    def test_openai_computer_call(self):
        rc, results, err = self.run_loop("openai_tool_calls.json", "--image", "tiny",
                                         "--format", "png")
        self.assertEqual(rc, 0, err)
        self.assertEqual([r["call_id"] for r in results],
                         ["call_1", "call_2", "call_3", "call_4", "call_5"])
        for r in results:
            self.assertEqual(r["type"], "computer_call_output")
            self.assertEqual(r["output"]["type"], "computer_screenshot")
            prefix = "data:image/png;base64,"
            self.assertTrue(r["output"]["image_url"].startswith(prefix))
            self.assertEqual(base64.b64decode(r["output"]["image_url"][len(prefix):])[:8],
                             PNG_MAGIC)

    def test_existing_session_stdin_scaling_and_errors(self):
        s = self.new_session()
        calls = [
            {"type": "tool_use", "id": "toolu_ok", "name": "computer",
             "input": {"action": "left_click", "coordinate": [399, 299]}},
            {"type": "tool_use", "id": "toolu_bad", "name": "computer",
             "input": {"action": "left_click", "coordinate": [5000, 5]}},
            {"type": "tool_use", "id": "toolu_other", "name": "str_replace_editor", "input": {}},
            {"type": "computer_call", "call_id": "call_batch", "pending_safety_checks": [],
             "actions": [{"type": "move", "x": 1, "y": 1}, {"type": "click", "x": 2, "y": 2}]},
            {"type": "computer_call", "call_id": "call_unsafe", "action": {"type": "screenshot"},
             "pending_safety_checks": [{"id": "sc_1", "code": "malicious_instructions",
                                        "message": "check"}]},
        ]
        rc, results, err = self.run_loop(None, "--session", s["id"], "--screenshot-size",
                                         "400x300", stdin=json.dumps(calls))
        self.assertEqual(rc, 1)  # the unacknowledged safety check
        self.assertIn("pending safety checks", err)
        by_id = {r.get("tool_use_id") or r.get("call_id"): r for r in results}
        self.assertEqual(sorted(by_id), ["call_batch", "toolu_bad", "toolu_ok"])
        image = base64.b64decode(by_id["toolu_ok"]["content"][-1]["source"]["data"])
        self.assertEqual(jpeg_size(image), (400, 300))
        self.assertTrue(by_id["toolu_bad"]["is_error"])
        self.assertIn("out_of_range", by_id["toolu_bad"]["content"][0]["text"])
        self.assertEqual(self.vc.get_session(s["id"])["status"], "ready")  # --session: kept

        rc, results, err = self.run_loop(None, "--session", s["id"], "--ack-safety-checks",
                                         stdin=json.dumps(calls[-1:]))
        self.assertEqual(rc, 0, err)
        self.assertEqual(results[0]["acknowledged_safety_checks"][0]["id"], "sc_1")


if __name__ == "__main__":
    unittest.main()
