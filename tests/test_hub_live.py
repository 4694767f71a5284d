"""The classroom's two hubs, run for real on loopback and driven over HTTP as a browser would.

1. Zero to JupyterHub route: JupyterHub 5 with the authenticator configuration of
   classroom/z2jh-values.yaml (`hub.config`, applied section by section as the chart's
   jupyterhub_config.py does) and a local spawner standing in for KubeSpawner: the server runs
   the course environment's jupyterhub-singleuser, after the values' postStart command copied the
   course into its home.
2. Slurm route: classroom/jupyterhub_config.py itself (loaded with load_subconfig; only addresses,
   ports, the partition and the run time are changed for the test cluster), batchspawner's
   SlurmSpawner submitting the learner's server as a Slurm job of the learner's Unix account on
   the two-node Slurm of tests/slurm/setup_slurm.sh, with the course environment (COURSE_VENV, no
   container) as the job's Python.

Both: the instructor (admin) and a learner sign up; the learner cannot log in until the
instructor authorizes them at /hub/authorize; then the learner logs in, the hub starts their
JupyterLab, and chapter 1 is read through the learner's server (/user/<name>/api/contents/...),
cookies and XSRF tokens handled as JupyterLab does. Configurable-http-proxy comes from npm, sudo
and the learner account from tests/classroom/setup_classroom.sh (CI runs it with --install).
Where a piece cannot be installed the tests skip with the reason; with LABUTIL_REQUIRE_CLASSROOM=1
(and LABUTIL_REQUIRE_SLURM=1 for the cluster) a missing piece fails them. No wall-clock
assertions: generous timeouts only, and every process and job is cleaned up on failure.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from conftest import ROOT

CLASSROOM_DIR = Path(os.environ.get("LABUTIL_CLASSROOM_DIR", "/tmp/labutil-classroom"))
SETUP = ROOT / "tests" / "classroom" / "setup_classroom.sh"
SLURM_SETUP = ROOT / "tests" / "slurm" / "setup_slurm.sh"
LEARNER = "labutil-learner"           # a Unix account on the test cluster (setup_classroom.sh)
INSTRUCTOR = "instructor"             # admin_users in both hub configurations
PASSWORDS = {INSTRUCTOR: "Lehrer-5b7c-course", LEARNER: "Lernen-9d2e-course"}   # >= 10, not common
CHAPTER = "gpu-cluster-course/chapters/ch01_intro.ipynb"   # below the server's root (the home)
HUB_START_S = 240
SPAWN_S = 480                         # time in the Slurm queue and a cold JupyterLab import on 2 busy cores

pytestmark = [pytest.mark.slow, pytest.mark.server]
requests = pytest.importorskip("requests")
psutil = pytest.importorskip("psutil")


def _need(reason: str):
    if os.environ.get("LABUTIL_REQUIRE_CLASSROOM") == "1":
        pytest.fail(f"LABUTIL_REQUIRE_CLASSROOM=1 but: {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def pieces() -> dict[str, str]:
    """piece -> path from tests/classroom/setup_classroom.sh (no install), or skip/fail with its reason."""
    for module, dist in (("jupyterhub", "jupyterhub"), ("nativeauthenticator", "jupyterhub-nativeauthenticator"),
                         ("batchspawner", "batchspawner"), ("jupyterhub_idle_culler", "jupyterhub-idle-culler")):
        if importlib.util.find_spec(module) is None:
            _need(f"{dist} is not installed in this environment (the test extra has it)")
    p = subprocess.run(["bash", str(SETUP)], capture_output=True, text=True, timeout=120,
                       env={**os.environ, "PYTHON": sys.executable})
    ok = dict(ln.split(" ", 2)[1:] for ln in p.stdout.splitlines() if ln.startswith("ok "))
    for ln in p.stdout.splitlines():
        if ln.startswith("missing "):
            ok.pop(ln.split()[1].rstrip(":"), None)
            ok.setdefault("_missing", ln)
    if p.returncode == 1:
        pytest.fail(f"setup_classroom.sh failed: {p.stdout}{p.stderr}")
    return ok


def _piece(pieces, name):
    if name not in pieces:
        _need(pieces.get("_missing", f"{name} is missing") + f" (bash {SETUP.relative_to(ROOT)} --install)")
    return pieces[name]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Hub:
    """A JupyterHub process with its own folder, ports and log; stop() ends it and everything it started."""

    def __init__(self, folder: Path, config: str, env: dict):
        self.folder, self.port = folder, _free_port()
        self.api_port, self.hub_port = _free_port(), _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.config = folder / "jupyterhub_config.py"
        for key, value in {"port": self.port, "api_port": self.api_port, "hub_port": self.hub_port,
                           "folder": folder}.items():
            config = config.replace("{%s}" % key, str(value))
        self.config.write_text(config, encoding="utf-8")
        self.log_path = folder / "hub.log"
        self.env = env
        self.proc = None
        self.procs: set = set()

    def log(self, tail: int = 6000) -> str:
        return self.log_path.read_text(errors="replace")[-tail:] if self.log_path.exists() else "(no log)"

    def start(self):
        log = open(self.log_path, "wb")
        self.proc = subprocess.Popen([sys.executable, "-m", "jupyterhub", "-f", str(self.config), "--debug"],
                                     cwd=self.folder, env=self.env, stdout=log, stderr=subprocess.STDOUT,
                                     start_new_session=True)
        log.close()
        deadline = time.monotonic() + HUB_START_S
        while time.monotonic() < deadline:
            self._remember_children()
            if self.proc.poll() is not None:
                raise AssertionError(f"the hub exited with {self.proc.returncode}:\n{self.log()}")
            try:
                if requests.get(self.url + "/hub/api", timeout=10).status_code == 200:
                    return self
            except requests.RequestException:
                pass
            time.sleep(1)
        raise AssertionError(f"the hub did not answer /hub/api within {HUB_START_S} s:\n{self.log()}")

    def _remember_children(self):
        try:
            self.procs.update(psutil.Process(self.proc.pid).children(recursive=True))
        except psutil.Error:
            pass

    def stop(self):
        if self.proc is None:
            return
        self._remember_children()
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)   # the hub stops the servers it spawned and its proxy
            try:
                self.proc.wait(timeout=120)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=30)
        for child in self.procs:   # anything left (a server started in its own session, the proxy)
            try:
                child.kill()
            except psutil.Error:
                pass


class Browser:
    """A requests session that behaves like a browser on the hub: cookies, forms with their _xsrf
    field, and the X-XSRFToken header (from the _xsrf cookie) on API calls, as JupyterLab sends."""

    def __init__(self, base: str):
        self.base = base
        self.s = requests.Session()
        self.s.trust_env = False   # loopback only: never a proxy from the environment

    def get(self, path: str, **kw):
        kw.setdefault("timeout", 120)
        return self.s.get(self.base + path, **kw)

    def submit(self, path: str, fields: dict, **kw):
        """GET the page holding the form, then POST it with the page's _xsrf token."""
        page = self.get(path)
        assert page.status_code == 200, (path, page.status_code, page.text[:500])
        token = re.search(r'name="_xsrf" value="([^"]+)"', page.text)
        assert token, f"no _xsrf field in {path}"
        kw.setdefault("timeout", 120)
        return self.s.post(self.base + path, data={**fields, "_xsrf": token.group(1)}, **kw)

    def api(self, method: str, path: str, cookie_path: str, **kw):
        token = next((c.value for c in self.s.cookies if c.name == "_xsrf" and cookie_path.startswith(c.path)), None)
        headers = {"X-XSRFToken": token} if token else {}
        kw.setdefault("timeout", 120)
        return self.s.request(method, self.base + path, headers=headers, **kw)


def _sign_up(hub: Hub, name: str) -> str:
    r = Browser(hub.url).submit("/hub/signup", {"username": name, "signup_password": PASSWORDS[name],
                                                "signup_password_confirmation": PASSWORDS[name]})
    assert r.status_code == 200, r.text[:500]
    return r.text


def _log_in(hub: Hub, name: str) -> tuple[Browser, requests.Response]:
    b = Browser(hub.url)
    r = b.submit("/hub/login", {"username": name, "password": PASSWORDS[name]}, allow_redirects=False)
    return b, r


def _wait_for_server(hub: Hub, learner: Browser, name: str, extra_log=lambda: "") -> str:
    """Follow the hub's spawn pages as a browser does until the learner's server answers."""
    r = learner.get("/hub/spawn", allow_redirects=False)
    assert r.status_code in (200, 302, 303), f"{r.status_code} on /hub/spawn\n{hub.log()}\n{extra_log()}"
    deadline = time.monotonic() + SPAWN_S
    while time.monotonic() < deadline:
        r = learner.get(f"/hub/spawn-pending/{name}", allow_redirects=False)
        target = r.headers.get("Location", "")
        if r.status_code in (302, 303) and f"/user/{name}/" in target:
            return target
        if r.status_code == 500 or "Spawn failed" in r.text:
            raise AssertionError(f"spawn failed: {r.text[-1500:]}\n{hub.log()}\n{extra_log()}")
        time.sleep(3)
    raise AssertionError(f"the learner's server did not start within {SPAWN_S} s:\n{hub.log()}\n{extra_log()}")


def _class_session(hub: Hub, extra_log=lambda: "") -> dict:
    """Sign-up, authorization, login, JupyterLab and chapter 1 through the learner's server. Returns
    what a browser saw at each step (the assertions are in the tests)."""
    seen = {}
    seen["instructor_signup"] = _sign_up(hub, INSTRUCTOR)
    seen["learner_signup"] = _sign_up(hub, LEARNER)
    _b, r = _log_in(hub, LEARNER)
    seen["learner_before"] = (r.status_code, r.text)
    instructor, r = _log_in(hub, INSTRUCTOR)
    seen["instructor_login"] = (r.status_code, r.headers.get("Location", ""))
    area = instructor.get("/hub/authorize")
    seen["authorize_area"] = (area.status_code, area.text)
    r = instructor.get(f"/hub/authorize/{LEARNER}", allow_redirects=False)
    seen["authorize"] = (r.status_code, r.headers.get("Location", ""))
    learner, r = _log_in(hub, LEARNER)
    seen["learner_after"] = (r.status_code, r.headers.get("Location", ""))
    seen["server_url"] = _wait_for_server(hub, learner, LEARNER, extra_log)
    lab = learner.get(f"/user/{LEARNER}/lab")        # OAuth round trip to the hub, then the page
    seen["lab"] = (lab.status_code, lab.url, lab.text)
    nb = learner.api("GET", f"/user/{LEARNER}/api/contents/{CHAPTER}", f"/user/{LEARNER}/")
    seen["chapter"] = (nb.status_code, nb.json() if nb.headers.get("Content-Type", "").startswith("application/json") else nb.text[:500])
    users = instructor.api("GET", "/hub/api/users", "/hub/")
    seen["admin_users"] = (users.status_code, users.json() if users.status_code == 200 else users.text[:300])
    stop = instructor.api("DELETE", f"/hub/api/users/{LEARNER}/server", "/hub/")
    seen["admin_stop"] = stop.status_code
    return seen


def _check_class_session(seen: dict, hub: Hub):
    assert "The signup was successful!" in seen["instructor_signup"], "an admin is authorized at sign-up"
    assert "Your information has been sent to the admin." in seen["learner_signup"]
    code, page = seen["learner_before"]
    assert code == 200 and f"User {LEARNER} has not been authorized by an administrator yet." in page
    assert seen["instructor_login"][0] == 302 and "/hub/" in seen["instructor_login"][1], seen["instructor_login"]
    code, page = seen["authorize_area"]
    assert code == 200 and LEARNER in page, "the instructor sees the pending learner at /hub/authorize"
    assert seen["authorize"] == (302, f"/hub/authorize#{LEARNER}")
    assert seen["learner_after"][0] == 302, ("the authorized learner is let in", seen["learner_after"], hub.log())
    code, url, page = seen["lab"]
    assert code == 200 and url.endswith(f"/user/{LEARNER}/lab"), (code, url)
    assert "<title>JupyterLab</title>" in page, page[:300]
    page_config = json.loads(re.search(r'<script id="jupyter-config-data" type="application/json">(.*?)</script>',
                                       page, re.S).group(1))
    assert page_config["hubUser"] == LEARNER and page_config["baseUrl"] == f"/user/{LEARNER}/"
    code, model = seen["chapter"]
    assert code == 200, (code, model)
    committed = json.loads((ROOT / "chapters" / "ch01_intro.ipynb").read_text(encoding="utf-8"))
    assert model["type"] == "notebook" and model["path"] == CHAPTER
    assert len(model["content"]["cells"]) == len(committed["cells"])
    sources = ["".join(c["source"]) if isinstance(c["source"], list) else c["source"] for c in model["content"]["cells"]]
    assert 'exercise("ch01.1").check(answer_1)' in "\n".join(sources)
    code, users = seen["admin_users"]
    assert code == 200
    by_name = {u["name"]: u for u in users}
    assert by_name[INSTRUCTOR]["admin"] is True and by_name[LEARNER]["admin"] is False
    assert by_name[LEARNER]["servers"][""]["ready"] is True, "the admin sees the learner's running server"
    assert seen["admin_stop"] in (202, 204), "the admin stops the learner's server"


def _base_env(chp: str) -> dict:
    env = dict(os.environ)
    env["PATH"] = f"{Path(chp).parent}:{Path(sys.executable).parent}:{env.get('PATH', '/usr/bin:/bin')}"
    for var in ("JUPYTERHUB_API_TOKEN", "JUPYTERHUB_API_URL", "JUPYTER_CONFIG_DIR", "CONFIGPROXY_AUTH_TOKEN"):
        env.pop(var, None)
    return env


_COMMON = """
c.JupyterHub.bind_url = "http://127.0.0.1:{port}"
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = {hub_port}
c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:{api_port}"
c.ConfigurableHTTPProxy.command = [{chp!r}]
c.JupyterHub.db_url = "sqlite:///{folder}/jupyterhub.sqlite"
c.JupyterHub.cookie_secret_file = "{folder}/jupyterhub_cookie_secret"
c.NativeAuthenticator.firstuse_db_path = "{folder}/passwords.dbm"
"""


# --------------------------------------------------------------------------- Zero to JupyterHub route
def test_z2jh_route_learner_signs_up_is_authorized_and_gets_jupyterlab(pieces, tmp_path):
    chp = _piece(pieces, "chp")
    values = yaml.safe_load((ROOT / "classroom" / "z2jh-values.yaml").read_text(encoding="utf-8"))
    su = values["singleuser"]
    home = tmp_path / "home"
    post_start = su["lifecycleHooks"]["postStart"]["exec"]["command"]
    args = ["--allow-root"] if os.geteuid() == 0 else []   # KubeSpawner runs jovyan (uid 1000); here we may be root
    config = ("c = get_config()  # noqa: F821\n"
              f"hub_config = {values['hub']['config']!r}\n"
              "for section, cfg in hub_config.items():   # as the chart's jupyterhub_config.py does\n"
              "    c[section].update(cfg)\n"
              "import subprocess\n"
              "def post_start(spawner):   # the values' lifecycleHooks.postStart, run in the server's home\n"
              f"    env = {{'HOME': spawner.home_dir, 'COURSE_DIR': {str(ROOT)!r}, 'PATH': '/usr/bin:/bin'}}\n"
              "    import os; os.makedirs(spawner.home_dir, exist_ok=True)\n"
              f"    subprocess.run({post_start!r}, env=env, check=True, timeout=300)\n"
              "c.Spawner.pre_spawn_hook = post_start\n"
              "c.JupyterHub.spawner_class = 'jupyterhub.spawner.SimpleLocalProcessSpawner'\n"
              f"c.SimpleLocalProcessSpawner.home_dir_template = {str(home / '{username}')!r}\n"
              f"c.Spawner.cmd = [{str(Path(sys.executable).parent / 'jupyterhub-singleuser')!r}]\n"
              f"c.Spawner.args = {args!r}\n"
              f"c.Spawner.default_url = {su['defaultUrl']!r}\n"
              f"c.Spawner.environment = {{'COURSE_DIR': {str(ROOT)!r}}}\n"
              f"c.Spawner.start_timeout = {SPAWN_S}\n"
              "c.Spawner.http_timeout = 300\n"
              + _COMMON.replace("{chp!r}", repr(chp)))
    hub = Hub(tmp_path, config, _base_env(chp))
    try:
        hub.start()
        seen = _class_session(hub)
        _check_class_session(seen, hub)
        assert (home / LEARNER / "gpu-cluster-course" / "labs").is_dir(), "postStart copied the course"
    finally:
        hub.stop()
    assert "not allowed" not in hub.log(20000), "JupyterHub 5's allow check let the authorized users in"


# --------------------------------------------------------------------------- Slurm route
# A Slurm cluster of its own (tests/slurm/setup_slurm.sh in its own folder, on its own ports): the
# script restarts its daemons whenever it runs, and tests/test_slurm.py runs it (and submits
# --exclusive two-node jobs) possibly at the same time on the other xdist worker.
HUB_SLURM = {"SLURM_TEST_DIR": "/tmp/labutil-slurm-hub", "SLURM_TEST_CTLD_PORT": "6917",
             "SLURM_TEST_SLURMD_PORT": "6918", "SLURM_TEST_SLURMD_PORT2": "6928"}


@pytest.fixture(scope="module")
def slurm_env():
    require = os.environ.get("LABUTIL_REQUIRE_SLURM") == "1"
    env = {**os.environ, **HUB_SLURM}
    p = subprocess.run(["bash", str(SLURM_SETUP)], capture_output=True, text=True, timeout=240, env=env)
    if p.returncode != 0:
        reason = (p.stderr.strip().splitlines() or ["no output"])[-1]
        subprocess.run(["bash", str(SLURM_SETUP), "--stop"], capture_output=True, timeout=120, env=env)
        if require:
            pytest.fail(f"LABUTIL_REQUIRE_SLURM=1 but Slurm did not start (exit {p.returncode}): {p.stderr[-1500:]}")
        pytest.skip(reason)
    yield {"SLURM_CONF": p.stdout.strip().splitlines()[-1].split("=", 1)[1]}
    subprocess.run(["bash", str(SLURM_SETUP), "--stop"], capture_output=True, timeout=120, env=env)


def _slurm_job_log(home: Path) -> str:
    logs = sorted(home.glob(".jupyterhub_slurmspawner_*.log"))
    return "".join(f"--- {p.name}\n{p.read_text(errors='replace')[-4000:]}" for p in logs) or "(no job log)"


def test_slurm_route_batchspawner_starts_the_learners_jupyterlab_as_a_slurm_job(pieces, slurm_env, tmp_path):
    chp = _piece(pieces, "chp")
    _piece(pieces, "sudo")
    home = Path(_piece(pieces, "learner"))
    for exe in ("batchspawner-singleuser", "jupyterhub-singleuser"):
        if not (Path(sys.executable).parent / exe).exists():
            _need(f"{exe} is not in the course environment {Path(sys.executable).parent} (test extra)")
    for old in home.glob(".jupyterhub_slurmspawner_*.log"):
        old.unlink()
    shutil.rmtree(home / "gpu-cluster-course", ignore_errors=True)
    tmp_path.chmod(0o755)
    config = ("c = get_config()  # noqa: F821\n"
              f"load_subconfig({str(ROOT / 'classroom' / 'jupyterhub_config.py')!r})\n"
              "# the test cluster: partition 'debug' (COURSE_PARTITION), 60 min at most, and its slurm.conf\n"
              "# is not in /etc/slurm: sbatch (run with the spawner's environment) and srun in the job need it\n"
              "c.SlurmSpawner.req_runtime = '00:30:00'\n"
              f"c.Spawner.environment = {{'SLURM_CONF': {slurm_env['SLURM_CONF']!r}}}\n"
              f"c.Spawner.start_timeout = {SPAWN_S}\n"
              "c.Spawner.http_timeout = 300\n"
              + _COMMON.replace("{chp!r}", repr(chp)))
    env = {**_base_env(chp), **slurm_env, "COURSE_VENV": sys.prefix, "COURSE_DIR": str(ROOT),
           "COURSE_PARTITION": "debug"}
    env.pop("COURSE_SIF", None)
    hub = Hub(tmp_path, config, env)

    def squeue():
        return subprocess.run(["squeue", "-h", "-u", LEARNER, "-o", "%i %T %B %j"], capture_output=True, text=True,
                              env={**os.environ, **slurm_env}, timeout=60).stdout

    try:
        hub.start()
        seen = _class_session(hub, extra_log=lambda: _slurm_job_log(home) + "\nsqueue: " + squeue())
        _check_class_session(seen, hub)
        log = hub.log(200000)
        job = re.search(r"Job submitted\. output: (\d+)", log)
        assert job, log[-3000:]
        started = re.search(rf"Notebook server job {job.group(1)} started at (127\.0\.0\.[12]):(\d+)", log)
        assert started, "batchspawner found the job's node and the port batchspawner-singleuser reported"
        assert "POST /hub/api/batchspawner" in log, "batchspawner-singleuser called back through batchspawner's API"
        job_log = _slurm_job_log(home)
        assert "batchspawner-singleuser" not in job_log or "command not found" not in job_log
        assert (home / "gpu-cluster-course" / "chapters" / "ch01_intro.ipynb").exists()
        assert (home / "gpu-cluster-course" / "chapters").stat().st_uid == __import__("pwd").getpwnam(LEARNER).pw_uid, \
            "the job ran as the learner's account"
    finally:
        hub.stop()
        subprocess.run(["scancel", "-u", LEARNER], env={**os.environ, **slurm_env}, capture_output=True, timeout=60)
