"""vitrine_client: a small, standard-library-only, typed client for the Vitrine gateway.

One class, VitrineClient, with one method per API call (docs/api.md):
sessions, tokens, the guest (commands, files, clipboard, apps, egress),
templates, screenshots and actions, and toolset_turn for a turn of Claude's
computer toolset (vitrine_client.toolset has the agent loop's half around it). Every failure -- an API error, no gateway listening, a reply that is not
the API's -- raises VitrineError(status, code, message); status is 0 when no
HTTP answer came back.

    from vitrine_client import VitrineClient
    vc = VitrineClient()                  # $VITRINE_URL, $VITRINE_API_KEY
    s = vc.create_session(image="desktop", url="https://example.org", wait=True)
    reply = vc.act(s["id"], {"action": "left_click", "coordinate": [640, 400]},
                   screenshot=True)
    open("after.jpg", "wb").write(VitrineClient.screenshot_bytes(reply))
    vc.delete_session(s["id"])
"""

import base64
import json
import os
import socket
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Dict, Iterable, List, Mapping, Optional, Tuple, Union

JSON = Dict[str, Any]

DEFAULT_URL = "http://127.0.0.1:8080"
DEFAULT_TIMEOUT_S = 60
WAIT_TIMEOUT_S = 330  # the gateway stops waiting for ready after 300 s
ACT_TIMEOUT_S = 300  # a "wait" action may take 100 s, settling the screen more

__all__ = ["VitrineClient", "VitrineError", "Screenshot", "DEFAULT_URL", "JSON"]


class VitrineError(Exception):
    """An API call failed.

    status: the HTTP status (0 when no HTTP reply came back); code: the API's
    stable error code ("not_found", "unauthorized", ...) or, without a reply,
    "unavailable"; message: a sentence for people; body: the whole JSON reply
    of an API error (a failed batch or toolset turn says there what ran, and
    a turn's tool_results), None without one."""

    def __init__(self, status: int, code: str, message: str, body: Optional[JSON] = None):
        super().__init__(f"{code}: {message}" + (f" (HTTP {status})" if status else ""))
        self.status = status
        self.code = code
        self.message = message
        self.body = body


class Screenshot:
    """An image from GET .../screenshot: data (bytes), content_type, width and
    height of the image, screen ("1280x800") and scale (image pixels per
    screen pixel), as the gateway's X-Vitrine-* headers said."""

    def __init__(self, data: bytes, headers: Mapping[str, str]) -> None:
        self.data = data
        self.content_type = headers.get("Content-Type", "")
        self.format = "png" if self.content_type == "image/png" else "jpeg"
        self.width = int(headers.get("X-Vitrine-Width", 0) or 0)
        self.height = int(headers.get("X-Vitrine-Height", 0) or 0)
        self.screen = headers.get("X-Vitrine-Screen", "")
        self.scale = float(headers.get("X-Vitrine-Scale", 0) or 0)

    def save(self, path: str) -> None:
        """Writes the image to path."""
        with open(path, "wb") as f:
            f.write(self.data)


def _read_key_file(path: str) -> str:
    with open(path, encoding="utf-8") as f:
        key = f.read().strip()
    if not key:
        raise VitrineError(0, "no_api_key", f"the key file {path} is empty")
    return key


class VitrineClient:
    """A connection to one gateway with one bearer token.

    url: the gateway, default $VITRINE_URL, else http://127.0.0.1:8080.
    api_key: the operator key or a session's control/view token; without it,
    api_key_file is read, else $VITRINE_API_KEY, else $VITRINE_HOME/api-key
    (default /var/lib/vitrine/api-key). A missing key raises VitrineError
    with code "no_api_key"."""

    def __init__(self, url: Optional[str] = None, api_key: Optional[str] = None,
                 api_key_file: Optional[str] = None, timeout: float = DEFAULT_TIMEOUT_S) -> None:
        self.url = (url or os.environ.get("VITRINE_URL") or DEFAULT_URL).rstrip("/")
        if not self.url.startswith(("http://", "https://")):
            self.url = "http://" + self.url
        self.timeout = timeout
        if api_key:
            self.api_key = api_key
        elif api_key_file:
            try:
                self.api_key = _read_key_file(api_key_file)
            except OSError as e:
                raise VitrineError(0, "no_api_key",
                                   f"cannot read the API key from {api_key_file}: {e.strerror}"
                                   ) from None
        elif os.environ.get("VITRINE_API_KEY"):
            self.api_key = os.environ["VITRINE_API_KEY"]
        else:
            home = os.environ.get("VITRINE_HOME") or "/var/lib/vitrine"
            path = os.path.join(home, "api-key")
            try:
                self.api_key = _read_key_file(path)
            except OSError as e:
                raise VitrineError(0, "no_api_key",
                                   "no API key: pass api_key or api_key_file, or set "
                                   f"VITRINE_API_KEY (the default {path}: {e.strerror})"
                                   ) from None
        # Loopback gateways must not be sent through an http_proxy from the environment.
        self._opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))

    # -- transport -----------------------------------------------------------

    def _request(self, method: str, path: str, body: Any = None,
                 query: Optional[Mapping[str, Any]] = None,
                 timeout: Optional[float] = None) -> Tuple[bytes, Any]:
        """Sends one request; returns (body bytes, headers) of a 2xx reply and
        raises VitrineError for anything else."""
        url = self.url + path
        if query:
            url += "?" + urllib.parse.urlencode({k: v for k, v in query.items() if v is not None})
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(url, data=data, method=method)
        req.add_header("Authorization", "Bearer " + self.api_key)
        if data is not None:
            req.add_header("Content-Type", "application/json")
        try:
            with self._opener.open(req, timeout=timeout or self.timeout) as resp:
                return resp.read(), resp.headers
        except urllib.error.HTTPError as e:
            raw = e.read()
            try:
                whole = json.loads(raw)
                err = whole["error"]
                raise VitrineError(e.code, err["code"], err.get("message", ""), whole) from None
            except (ValueError, KeyError, TypeError):
                raise VitrineError(e.code, "http_error",
                                   raw[:200].decode(errors="replace") or e.reason) from None
        except urllib.error.URLError as e:
            why = e.reason
            if isinstance(why, ConnectionRefusedError):
                msg = f"cannot connect to the gateway at {self.url}: connection refused"
            else:
                msg = f"cannot reach the gateway at {self.url}: {why}"
            raise VitrineError(0, "unavailable", msg) from None
        except (socket.timeout, TimeoutError):
            raise VitrineError(0, "timeout", f"no answer from {self.url} within "
                               f"{timeout or self.timeout} s") from None
        except OSError as e:  # reset connections and the like
            raise VitrineError(0, "unavailable", f"{self.url}: {e}") from None

    def _raw_json(self, method: str, path: str, data: bytes,
                  query: Optional[Mapping[str, Any]] = None) -> Any:
        """Sends data (bytes) as the body; returns the JSON reply."""
        url = self.url + path + ("?" + urllib.parse.urlencode(query) if query else "")
        req = urllib.request.Request(url, data=data, method=method)
        req.add_header("Authorization", "Bearer " + self.api_key)
        req.add_header("Content-Type", "application/octet-stream")
        try:
            with self._opener.open(req, timeout=self.timeout) as resp:
                return json.loads(resp.read())
        except urllib.error.HTTPError as e:
            try:
                err = json.loads(e.read())["error"]
                raise VitrineError(e.code, err["code"], err.get("message", "")) from None
            except (ValueError, KeyError, TypeError):
                raise VitrineError(e.code, "http_error", str(e.reason)) from None
        except (urllib.error.URLError, OSError) as e:
            raise VitrineError(0, "unavailable", f"{self.url}: {e}") from None

    def _json(self, method: str, path: str, body: Any = None,
              query: Optional[Mapping[str, Any]] = None, timeout: Optional[float] = None) -> Any:
        raw, _ = self._request(method, path, body, query, timeout)
        try:
            return json.loads(raw)
        except ValueError:
            raise VitrineError(0, "bad_reply", f"{method} {path}: the reply is not JSON") from None

    @staticmethod
    def _sid(session_id: str) -> str:
        # Ids are [A-Za-z0-9_-]; quoting keeps anything else from changing the path.
        return urllib.parse.quote(session_id, safe="")

    # -- sessions ------------------------------------------------------------

    def create_session(self, image: Optional[str] = None, template: Optional[str] = None,
                       width: Optional[int] = None, height: Optional[int] = None,
                       vcpus: Optional[int] = None, memory_mib: Optional[int] = None,
                       url: Optional[str] = None, timeout_s: Optional[int] = None,
                       wait: bool = False, idle_timeout_s: Optional[int] = None,
                       on_expiry: Optional[str] = None, page: Optional[str] = None,
                       egress: Optional[Iterable[str]] = None) -> JSON:
        """POST /v1/sessions. Returns the new session (with its tokens). With
        wait=True the gateway answers once it is ready (or failed). egress:
        a list of allowed "host[:port]" entries (default: no network)."""
        body: JSON = {k: v for k, v in dict(image=image, template=template, width=width, height=height,
                                      vcpus=vcpus, memory_mib=memory_mib, url=url,
                                      timeout_s=timeout_s, idle_timeout_s=idle_timeout_s,
                                      on_expiry=on_expiry, page=page).items() if v is not None}
        if egress is not None:
            body["egress"] = {"allow": list(egress)}
        return self._json("POST", "/v1/sessions", body, {"wait": "ready" if wait else None},
                          WAIT_TIMEOUT_S if wait else None)

    def list_sessions(self) -> List[JSON]:
        """GET /v1/sessions. Returns the list of sessions."""
        return self._json("GET", "/v1/sessions")["sessions"]

    def get_session(self, session_id: str, wait: bool = False) -> JSON:
        """GET /v1/sessions/{id}; with wait=True, once it is no longer starting."""
        return self._json("GET", "/v1/sessions/" + self._sid(session_id), None,
                          {"wait": "ready" if wait else None},
                          WAIT_TIMEOUT_S if wait else None)

    def delete_session(self, session_id: str) -> JSON:
        """DELETE /v1/sessions/{id}. Returns {"id", "deleted": true}."""
        return self._json("DELETE", "/v1/sessions/" + self._sid(session_id))

    def pause(self, session_id: str, mode: str = "memory") -> JSON:
        """POST /v1/sessions/{id}/pause; mode "memory" or "disk". Returns the
        session once paused."""
        return self._json("POST", f"/v1/sessions/{self._sid(session_id)}/pause",
                          {"mode": mode}, timeout=WAIT_TIMEOUT_S)

    def resume(self, session_id: str) -> JSON:
        """POST /v1/sessions/{id}/resume. Returns the session once running."""
        return self._json("POST", f"/v1/sessions/{self._sid(session_id)}/resume", {},
                          timeout=WAIT_TIMEOUT_S)

    def fork(self, session_id: str, wait: bool = False) -> JSON:
        """POST /v1/sessions/{id}/fork. Returns the new session (with its tokens)."""
        return self._json("POST", f"/v1/sessions/{self._sid(session_id)}/fork", {},
                          {"wait": "ready" if wait else None}, WAIT_TIMEOUT_S)

    # -- tokens (the operator key) ---------------------------------------------

    def mint_token(self, session_id: str, scopes: Iterable[str],
                   ttl_s: Optional[int] = None) -> JSON:
        """POST /v1/sessions/{id}/tokens: a token with exactly these scopes
        ("view", "act", "exec", "root", "egress", "fork", "share", "vnc") for
        ttl_s seconds (None: the session's life). Returns {id, token, scopes,
        expires_unix_ms}; the secret is only in this answer."""
        body: JSON = {"scopes": list(scopes)}
        if ttl_s is not None:
            body["ttl_s"] = ttl_s
        return self._json("POST", f"/v1/sessions/{self._sid(session_id)}/tokens", body)

    def list_tokens(self, session_id: str) -> List[JSON]:
        """GET /v1/sessions/{id}/tokens. Returns the list (no secrets)."""
        return self._json("GET", f"/v1/sessions/{self._sid(session_id)}/tokens")["tokens"]

    def revoke_token(self, session_id: str, token_id: str) -> JSON:
        """DELETE /v1/sessions/{id}/tokens/{token_id} ("control", "view" or a
        minted id); its live sockets close within a second."""
        return self._json("DELETE", f"/v1/sessions/{self._sid(session_id)}/tokens/"
                          f"{self._sid(token_id)}")

    def rotate_token(self, session_id: str, which: str) -> str:
        """POST /v1/sessions/{id}/tokens/{control|view}/rotate. Returns the new secret."""
        return self._json("POST", f"/v1/sessions/{self._sid(session_id)}/tokens/"
                          f"{self._sid(which)}/rotate", {})["token"]

    def events(self, session_id: str, after: int = 0, wait_s: Optional[int] = None) -> JSON:
        """GET /v1/sessions/{id}/events. Returns {"events": [...], "last": SEQ}."""
        return self._json("GET", f"/v1/sessions/{self._sid(session_id)}/events", None,
                          {"after": after, "wait_s": wait_s},
                          (wait_s or 0) + DEFAULT_TIMEOUT_S)

    # -- the guest: commands, files, clipboard, apps, egress, CDP ---------------

    def exec(self, session_id: str, cmd: str, args: Optional[List[str]] = None,
             env: Optional[Mapping[str, str]] = None, cwd: Optional[str] = None,
             timeout: Optional[int] = None, stdin: Union[str, bytes, None] = None,
             user: Optional[str] = None) -> JSON:
        """POST /v1/sessions/{id}/exec. cmd alone is a shell command line;
        with args it is the program. stdin: str or bytes. Returns {exit_code,
        signal, timed_out, stdout, stderr, ...}; stdout/stderr are decoded
        to bytes when the gateway sent them as base64."""
        body: JSON = {k: v for k, v in dict(cmd=cmd, args=args, env=env, cwd=cwd, timeout=timeout,
                                      user=user).items() if v is not None}
        if isinstance(stdin, bytes):
            body["stdin_b64"] = base64.b64encode(stdin).decode()
        elif stdin is not None:
            body["stdin"] = stdin
        r = self._json("POST", f"/v1/sessions/{self._sid(session_id)}/exec", body,
                       timeout=(timeout or 60) + DEFAULT_TIMEOUT_S)
        for name in ("stdout", "stderr"):
            if r.get(name + "_encoding") == "base64":
                r[name] = base64.b64decode(r[name])
        return r

    def upload(self, session_id: str, path: str, data: Union[bytes, str]) -> JSON:
        """PUT /v1/sessions/{id}/files?path=: data (bytes) into the guest."""
        url = f"/v1/sessions/{self._sid(session_id)}/files"
        req_body = data if isinstance(data, bytes) else data.encode()
        return self._raw_json("PUT", url, req_body, {"path": path})

    def download(self, session_id: str, path: str) -> Union[bytes, JSON]:
        """GET /v1/sessions/{id}/files?path=: a file's bytes (a directory
        comes back as its listing, a dict)."""
        raw, headers = self._request("GET", f"/v1/sessions/{self._sid(session_id)}/files",
                                     query={"path": path})
        if (headers.get("Content-Type") or "").startswith("application/json"):
            return json.loads(raw)
        return raw

    def get_clipboard(self, session_id: str) -> str:
        """GET /v1/sessions/{id}/clipboard. Returns the text."""
        return self._json("GET", f"/v1/sessions/{self._sid(session_id)}/clipboard")["text"]

    def set_clipboard(self, session_id: str, text: str) -> JSON:
        """PUT /v1/sessions/{id}/clipboard {text}."""
        return self._json("PUT", f"/v1/sessions/{self._sid(session_id)}/clipboard",
                          {"text": text})

    def open_url(self, session_id: str, url: str) -> JSON:
        """POST /v1/sessions/{id}/open {url}: returns once the page has loaded."""
        return self._json("POST", f"/v1/sessions/{self._sid(session_id)}/open", {"url": url},
                          timeout=ACT_TIMEOUT_S)

    def launch(self, session_id: str, command: str, args: Optional[Iterable[str]] = None) -> JSON:
        """POST /v1/sessions/{id}/launch: starts an installed program on the
        desktop. Returns {"pid"}."""
        body: JSON = {"command": command}
        if args is not None:
            body["args"] = list(args)
        return self._json("POST", f"/v1/sessions/{self._sid(session_id)}/launch", body)

    def egress(self, session_id: str, allow: Optional[Iterable[str]] = None) -> JSON:
        """GET (allow None) or PUT /v1/sessions/{id}/egress. Returns {"allow"}."""
        path = f"/v1/sessions/{self._sid(session_id)}/egress"
        if allow is None:
            return self._json("GET", path)
        return self._json("PUT", path, {"allow": list(allow)})

    def egress_log(self, session_id: str, after: int = 0, limit: Optional[int] = None) -> JSON:
        """GET /v1/sessions/{id}/egress/log. Returns {"entries", "next", "dropped"}."""
        return self._json("GET", f"/v1/sessions/{self._sid(session_id)}/egress/log", None,
                          {"after": after, "limit": limit})

    def cdp_url(self, session_id: str) -> str:
        """The CDP endpoint for Playwright's connect_over_cdp / Puppeteer's
        connect (send the session's control token as a Bearer header)."""
        return f"{self.url}/v1/sessions/{self._sid(session_id)}/cdp"

    # -- templates -----------------------------------------------------------

    def create_template(self, name: str, image: str = "desktop", url: Optional[str] = None,
                        page: Optional[str] = None, width: Optional[int] = None,
                        height: Optional[int] = None) -> JSON:
        """POST /v1/templates: starts building; poll get_template until
        its status is "ready" (or "failed")."""
        body = {k: v for k, v in dict(name=name, image=image, url=url, page=page, width=width,
                                      height=height).items() if v is not None}
        return self._json("POST", "/v1/templates", body)

    def get_template(self, name: str) -> JSON:
        """GET /v1/templates/{name}."""
        return self._json("GET", "/v1/templates/" + self._sid(name))

    def list_templates(self) -> List[JSON]:
        """GET /v1/templates. Returns the list of templates."""
        return self._json("GET", "/v1/templates")["templates"]

    def delete_template(self, name: str) -> JSON:
        """DELETE /v1/templates/{name}."""
        return self._json("DELETE", "/v1/templates/" + self._sid(name))

    # -- projects, API keys and usage (the operator key) ---------------------

    def create_project(self, name: str, quota: Optional[Mapping[str, Optional[int]]] = None,
                       allow_root: Optional[bool] = None) -> JSON:
        """POST /v1/projects: a tenant. quota: any of sessions, vcpus,
        memory_mib, disk_gib (None: no limit)."""
        body: Dict[str, Any] = {"name": name}
        if quota is not None:
            body["quota"] = dict(quota)
        if allow_root is not None:
            body["allow_root"] = allow_root
        return self._json("POST", "/v1/projects", body)

    def list_projects(self) -> List[JSON]:
        """GET /v1/projects. Returns the list of projects."""
        return self._json("GET", "/v1/projects")["projects"]

    def get_project(self, name: str) -> JSON:
        """GET /v1/projects/{name}: its quota, usage and key count (a
        project's own key may read it)."""
        return self._json("GET", "/v1/projects/" + self._sid(name))

    def update_project(self, name: str, quota: Optional[Mapping[str, Optional[int]]] = None,
                       allow_root: Optional[bool] = None) -> JSON:
        """PATCH /v1/projects/{name}: the quotas given (None lifts one) and
        allow_root."""
        body: Dict[str, Any] = {}
        if quota is not None:
            body["quota"] = dict(quota)
        if allow_root is not None:
            body["allow_root"] = allow_root
        return self._json("PATCH", "/v1/projects/" + self._sid(name), body)

    def delete_project(self, name: str) -> JSON:
        """DELETE /v1/projects/{name}: an empty project, with its keys."""
        return self._json("DELETE", "/v1/projects/" + self._sid(name))

    def create_key(self, name: Optional[str] = None, project: Optional[str] = None) -> JSON:
        """POST /v1/projects/{project}/keys, or /v1/keys for an admin key
        (no project). The reply's "key" is the secret, shown this once."""
        body = {"name": name} if name else {}
        path = "/v1/projects/" + self._sid(project) + "/keys" if project else "/v1/keys"
        return self._json("POST", path, body)

    def list_keys(self, project: Optional[str] = None) -> List[JSON]:
        """GET /v1/keys (every key) or a project's keys; never a secret."""
        path = "/v1/projects/" + self._sid(project) + "/keys" if project else "/v1/keys"
        return self._json("GET", path)["keys"]

    def revoke_key(self, key_id: str, project: Optional[str] = None) -> JSON:
        """DELETE /v1/keys/{id}, or through its project (a key of another
        project is then not found)."""
        prefix = "/v1/projects/" + self._sid(project) if project else "/v1"
        return self._json("DELETE", prefix + "/keys/" + self._sid(key_id))

    def usage(self, project: Optional[str] = None) -> JSON:
        """GET /v1/usage: sessions' usage and each project's sums (one
        project's with project; a project key sees its own)."""
        return self._json("GET", "/v1/usage", query={"project": project} if project else None)

    # -- the screen ----------------------------------------------------------

    def screenshot(self, session_id: str, format: str = "jpeg", quality: Optional[int] = None,
                   width: Optional[int] = None, height: Optional[int] = None) -> Screenshot:
        """GET /v1/sessions/{id}/screenshot. Returns a Screenshot."""
        data, headers = self._request(
            "GET", f"/v1/sessions/{self._sid(session_id)}/screenshot",
            query=dict(format=format, quality=quality, width=width, height=height))
        return Screenshot(data, headers)

    def act(self, session_id: str, action: Mapping[str, Any],
            screenshot: Union[bool, Mapping[str, Any], None] = None) -> JSON:
        """POST /v1/sessions/{id}/actions with one action (a dict in the
        Anthropic, OpenAI or vitrine dialect). screenshot: None to leave the
        action as it is, True or a dict of options (format, quality, width,
        height, quiet_ms, timeout_ms) for a settled screenshot in the reply.
        Returns the reply: {id?, ok, action, elapsed_ms, result?, screenshot?}."""
        body: JSON = dict(action)
        if screenshot is not None:
            body["screenshot"] = screenshot
        return self._json("POST", f"/v1/sessions/{self._sid(session_id)}/actions", body,
                          timeout=ACT_TIMEOUT_S)

    @staticmethod
    def screenshot_bytes(reply: Mapping[str, Any]) -> bytes:
        """The image bytes of an act() reply's screenshot; VitrineError when it has none."""
        shot = reply.get("screenshot") or {}
        if "data" not in shot:
            raise VitrineError(0, "no_screenshot", "the reply carries no screenshot")
        return base64.b64decode(shot["data"])

    def toolset_turn(self, session_id: str, calls: Any, tool: Optional[Mapping[str, Any]] = None,
                     image_limits: Optional[Mapping[str, int]] = None,
                     image_format: Optional[str] = None) -> List[JSON]:
        """POST /v1/sessions/{id}/actions with one turn of Claude's computer
        toolset (computer_toolset_20260801): calls is the assistant message
        the Messages API returned, its content list, or its tool_use blocks
        (other blocks are skipped by the gateway). tool: the tools[] entry the
        request gave (members with "enabled": false are refused);
        image_limits: {"max_long_edge", "max_visual_tokens"} of the model
        (default 2576 and 4784; fixed for the session by its first turn);
        image_format: "png" or "jpeg" for screenshot and zoom images.

        Returns the turn's tool_result blocks, one per call in order, ready
        to send back as the content of the next user message: a call that
        failed is an is_error result, and every call after it is answered
        "Not executed: an earlier computer action in this turn failed.".
        VitrineError only when no call could be answered (the session is
        gone, the turn itself is malformed, the gateway unreachable)."""
        if isinstance(calls, Mapping) and isinstance(calls.get("content"), list):
            body: JSON = dict(calls)
        elif isinstance(calls, Mapping):
            body = {"actions": [dict(calls)]}
        else:
            body = {"content": list(calls)}
        if tool is not None:
            body["tool"] = dict(tool)
        if image_limits is not None:
            body["image_limits"] = dict(image_limits)
        if image_format is not None:
            body["screenshot"] = {"format": image_format}
        try:
            reply = self._json("POST", f"/v1/sessions/{self._sid(session_id)}/actions", body,
                               timeout=ACT_TIMEOUT_S)
        except VitrineError as e:
            if e.body and isinstance(e.body.get("tool_results"), list):
                return list(e.body["tool_results"])
            raise
        return list(reply.get("tool_results") or [])
