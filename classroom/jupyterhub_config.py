"""JupyterHub on a Slurm cluster's login node: each learner's JupyterLab runs as a small Slurm job
(batchspawner), so from its terminal or a lab notebook the learner submits GPU runs with the
course's templates (``sbatch labs/slurm/nccl_bench.sbatch`` or
``python -m labutil.machine.launch --submit nccl_bench --nodes 2 --gpus-per-node 8``).

    pip install ".[classroom]"        # jupyterhub 5, batchspawner, nativeauthenticator, idle culler, nbgrader
    npm install -g configurable-http-proxy
    COURSE_SIF=/shared/images/gpu-cluster-course.sif jupyterhub -f classroom/jupyterhub_config.py

The course environment of each learner's server is either
- the Apptainer image (``classroom/course.def``) on the shared file system: ``COURSE_SIF=<path>``
  (the default); learners submit GPU jobs from the server's node with the host's Slurm client, and
  ``classroom/apptainer-python`` runs the templates' ``$PYTHON`` inside the same image; or
- a Python environment on the shared file system, no container: ``COURSE_VENV=<venv>`` (the
  environment's ``bin/`` holds ``jupyterhub-singleuser`` and ``batchspawner-singleuser``) and
  ``COURSE_DIR=<course checkout>`` (default: the checkout holding this file). This is the route
  tests/test_hub_live.py runs for real on the CI's Slurm.

Hub user names are Unix accounts on the cluster: batchspawner submits each job as that user
(``sudo -E -u <name> sbatch``, its default ``exec_prefix``), so the hub runs as root or as a user
allowed to sudo sbatch/squeue/scancel, and the instructor authorizes only learners who have an
account (a sign-up without one gets a clear message at spawn, see ``_require_unix_account``).
Sizes: classroom/README.md. Checked by tests/test_classroom.py (rendered with batchspawner's own
template code) and run live by tests/test_hub_live.py.
"""

import os
import pwd
import shlex
import sys
from pathlib import Path

# batchspawner registers its API handler (/hub/api/batchspawner, where batchspawner-singleuser
# reports the port it picked on the compute node) when it is imported; import it here so the hub
# has the route before it builds its handlers (jupyterhub/batchspawner#126).
import batchspawner  # noqa: F401

c = get_config()  # noqa: F821 - provided by JupyterHub when it loads this file

COURSE_VENV = os.environ.get("COURSE_VENV", "")
COURSE_SIF = "" if COURSE_VENV else os.environ.get("COURSE_SIF", "/shared/images/gpu-cluster-course.sif")
COURSE_DIR = os.environ.get("COURSE_DIR", str(Path(__file__).resolve().parent.parent))
PARTITION = os.environ.get("COURSE_PARTITION", "interactive")  # a CPU partition for the servers
# The host's Slurm client inside the container (binaries, config, munge socket, libslurm): paths
# differ by distribution (Debian/Ubuntu: /usr/lib/x86_64-linux-gnu/slurm; RHEL: /usr/lib64/slurm).
SLURM_BINDS = os.environ.get("COURSE_SLURM_BINDS", "/etc/slurm,/run/munge,/usr/bin/sbatch,/usr/bin/squeue,"
                             "/usr/bin/scancel,/usr/bin/sacct,/usr/lib64/slurm")

# -- who: 30-100 learners and the instructors -------------------------------------------------------
c.JupyterHub.authenticator_class = "nativeauthenticator.NativeAuthenticator"
c.NativeAuthenticator.open_signup = False          # the instructor authorizes each learner at /hub/authorize
c.NativeAuthenticator.minimum_password_length = 10
c.Authenticator.admin_users = {"instructor"}       # signs up like a learner and is authorized at once
# JupyterHub 5 admits nobody unless an allow rule is set ("Changed in version 5.0: If no allow
# config is specified, then by default nobody will have access to your Hub", JupyterHub docs,
# tutorial/getting-started/authenticators-users-basics). NativeAuthenticator's own gate still
# applies: its authenticate() returns a user only when the instructor has authorized them
# (nativeauthenticator 1.3.0, NativeAuthenticator.authenticate: is_authorized and the password).
# Without this line even the signed-up admin is refused (jupyterhub/jupyterhub-deploy-docker#144).
c.Authenticator.allow_all = True
c.JupyterHub.admin_access = True
c.JupyterHub.active_server_limit = 110             # 100 learners + staff
c.JupyterHub.concurrent_spawn_limit = 30           # a class starting at once queues, not fails
c.JupyterHub.bind_url = "http://0.0.0.0:8000"
c.JupyterHub.hub_ip = "0.0.0.0"                    # the servers on compute nodes call back to the hub


def _require_unix_account(spawner):
    """A hub account without a cluster account cannot own a Slurm job: say so, before sbatch."""
    try:
        pwd.getpwnam(spawner.user.name)
    except KeyError:
        raise RuntimeError(f"user {spawner.user.name!r} has no account on this cluster; "
                           "ask the instructor to create it (useradd / LDAP) before starting a server") from None


c.Spawner.pre_spawn_hook = _require_unix_account

# -- where: each server is a Slurm job running the course environment --------------------------------
c.JupyterHub.spawner_class = "batchspawner.SlurmSpawner"
c.Spawner.default_url = "/lab/tree/gpu-cluster-course/chapters/ch01_intro.ipynb"
c.Spawner.start_timeout = 600                      # time in the Slurm queue counts here
c.Spawner.http_timeout = 120
c.Spawner.cpu_limit = 2
c.Spawner.mem_limit = "3G"
c.SlurmSpawner.req_partition = PARTITION
c.SlurmSpawner.req_nprocs = "2"
c.SlurmSpawner.req_memory = "3G"
c.SlurmSpawner.req_runtime = "08:00:00"            # one teaching day
c.SlurmSpawner.req_options = ""
c.SlurmSpawner.req_srun = "srun"

if COURSE_SIF:
    # The course into the learner's home from the image; the server runs inside the image with the
    # host's Slurm client bound in, so sbatch/squeue work from its terminal.
    _copy_from = f"apptainer exec {shlex.quote(COURSE_SIF)} sh -c"
    _setup = ""
    _run = (f"apptainer exec --bind {shlex.quote(SLURM_BINDS)} --env COURSE_SIF={shlex.quote(COURSE_SIF)} "
            f"{shlex.quote(COURSE_SIF)} ")
else:
    # No container: the environment's bin/ first on PATH (jupyterhub-singleuser and
    # batchspawner-singleuser live there), the course from COURSE_DIR.
    _copy_from = "sh -c"
    _setup = (f"export COURSE_DIR={shlex.quote(COURSE_DIR)}\n"
              f"export PATH={shlex.quote(str(Path(COURSE_VENV) / 'bin'))}:\"$PATH\"\n")
    _run = ""

# cp -rn copies the course without overwriting a learner's edits. coreutils 9.2-9.4 exit 1 when
# -n skips a file (Debian bug #1058752, reverted in 9.5): with `set -e` that would end the job on a
# learner's second start, so a skip is accepted as long as the chapters are there.
_COPY = ("'cp -rn \"$COURSE_DIR/chapters\" \"$COURSE_DIR/labs\" \"$COURSE_DIR/classroom\" \"$HOME/gpu-cluster-course/\" "
         "|| test -d \"$HOME/gpu-cluster-course/chapters\"'")

c.SlurmSpawner.batch_script = """#!/bin/bash
#SBATCH --output={{homedir}}/.jupyterhub_slurmspawner_%j.log
#SBATCH --job-name=course-{{username}}
#SBATCH --chdir={{homedir}}
#SBATCH --export={{keepvars}}
#SBATCH --get-user-env=L
{% if partition %}#SBATCH --partition={{partition}}
{% endif %}{% if runtime %}#SBATCH --time={{runtime}}
{% endif %}{% if memory %}#SBATCH --mem={{memory}}
{% endif %}{% if nprocs %}#SBATCH --cpus-per-task={{nprocs}}
{% endif %}{% if options %}#SBATCH {{options}}
{% endif %}set -euo pipefail
""" + _setup + """mkdir -p "$HOME/gpu-cluster-course"
""" + _copy_from + " " + _COPY + """
trap 'echo SIGTERM received' TERM
# sbatch --export=<list> (batchspawner's keepvars) leaves SLURM_EXPORT_ENV=<list> in the job, and srun
# honours it: the server would get only those variables, no PATH ("execve(): batchspawner-singleuser:
# No such file or directory", seen on Slurm 22.05). The job step gets the script's whole environment.
export SLURM_EXPORT_ENV=ALL
{{prologue}}
{{srun}} """ + _run + """{{cmd}}
echo "jupyterhub-singleuser ended gracefully"
{{epilogue}}
"""

# -- idle servers are stopped (the Slurm allocation is released) ------------------------------------
# The culler runs with the hub's own Python (where `pip install .[classroom]` put it), not
# whatever `python3` is first on PATH.
c.JupyterHub.services = [
    {"name": "idle-culler", "command": [sys.executable, "-m", "jupyterhub_idle_culler", "--timeout=3600"]},
]
c.JupyterHub.load_roles = [
    {"name": "idle-culler", "services": ["idle-culler"],
     "scopes": ["list:users", "read:users:activity", "read:servers", "delete:servers"]},
]
