"""tests/runner/images.py: the guest images, built in the background.

guest-images/build.sh builds an image only when its recipe changed (else it
says "up to date" at once); from scratch the desktop image takes minutes of
debootstrap, which overlap the compiling and the tests that boot nothing.
One thread runs build.sh for each image in turn, into one log; the steps
that need an image wait for it (wait_step), and the scheduler asks busy()
to run one step at a time while a build holds a core.
"""

import os
import subprocess
import threading

import schedule

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


class ImageBuild:
    def __init__(self, names, log_path):
        self.names = list(names)
        self.log_path = log_path
        self.done = {n: threading.Event() for n in self.names}
        self.ok = {}
        self.proc = None
        self.stopping = False
        self.thread = None

    def start(self):
        if not self.names:
            return
        open(self.log_path, "w").close()
        self.thread = threading.Thread(target=self._build_all, daemon=True)
        self.thread.start()

    def _build_all(self):
        for name in self.names:
            rc = 1
            if not self.stopping:
                with open(self.log_path, "a") as log:
                    self.proc = subprocess.Popen([os.path.join(REPO, "guest-images", "build.sh"), name],
                                                 stdout=log, stderr=subprocess.STDOUT, cwd=REPO,
                                                 stdin=subprocess.DEVNULL)
                    rc = self.proc.wait()
            self.ok[name] = rc == 0
            self.done[name].set()

    def busy(self):
        """Whether a build is still running."""
        return self.thread is not None and self.thread.is_alive()

    def stop(self):
        """Ends a build still running (a run cut short) and waits for it."""
        self.stopping = True
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
        if self.thread:
            self.thread.join()

    def _log(self):
        """The log's lines (none when it cannot be read)."""
        try:
            with open(self.log_path, errors="replace") as f:
                return f.read().splitlines()
        except OSError:
            return []

    def wait_step(self, name):
        """A step that waits until image name is built (or up to date): its
        output is the log's lines of that image (not apt's and debootstrap's
        chatter), and the log's last 30 lines too when the build failed."""
        tag = "[image %s]" % name

        def action(step):
            self.done[name].wait()
            lines = self._log()
            out = "\n".join([l for l in lines if l.startswith(tag)] or lines[-20:])
            if self.ok.get(name):
                return schedule.Result(output=out)
            return schedule.Result(failed=1, output=out + "\n" + "\n".join(lines[-30:]),
                                   why="image %s did not build (build/images.log)" % name)
        return schedule.Step("guest image: %s" % name, "images", action, key="images/" + name, solo=True)
