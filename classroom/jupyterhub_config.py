"""JupyterHub on a Slurm cluster's login node: each learner's JupyterLab runs as a small Slurm job
(batchspawner), so from its terminal or a lab notebook the learner submits GPU runs with the
course's templates (``sbatch labs/slurm/nccl_bench.sbatch`` or
``python -m labutil.machine.launch --submit nccl_bench --nodes 2 --gpus-per-node 8``).

    pip install "jupyterhub>=5.2,<6" "batchspawner>=1.3" jupyterhub-nativeauthenticator jupyterhub-idle-culler
    jupyterhub -f classroom/jupyterhub_config.py

The course environment is the Apptainer image (``classroom/course.def``) on the shared file
system; each learner's server runs from it. Learners submit GPU jobs from the server's node
with the host's Slurm client; ``classroom/apptainer-python`` makes the templates' ``$PYTHON``
run inside the same image on the GPU nodes. Sizes: classroom/README.md. Checked by
tests/test_classroom.py (loaded with a plain traitlets Config; nothing here imports batchspawner).
"""

import os

c = get_config()  # noqa: F821 - provided by JupyterHub when it loads this file

COURSE_SIF = os.environ.get("COURSE_SIF", "/shared/images/gpu-cluster-course.sif")
PARTITION = os.environ.get("COURSE_PARTITION", "interactive")  # a CPU partition for the servers
# The host's Slurm client inside the container (binaries, config, munge socket, libslurm): paths
# differ by distribution (Debian/Ubuntu: /usr/lib/x86_64-linux-gnu/slurm; RHEL: /usr/lib64/slurm).
SLURM_BINDS = os.environ.get("COURSE_SLURM_BINDS", "/etc/slurm,/run/munge,/usr/bin/sbatch,/usr/bin/squeue,"
                             "/usr/bin/scancel,/usr/bin/sacct,/usr/lib64/slurm")

# -- who: 30-100 learners and the instructors -------------------------------------------------------
c.JupyterHub.authenticator_class = "nativeauthenticator.NativeAuthenticator"
c.NativeAuthenticator.open_signup = False          # the instructor authorizes each learner
c.NativeAuthenticator.minimum_password_length = 10
c.Authenticator.admin_users = {"instructor"}
c.JupyterHub.admin_access = True
c.JupyterHub.active_server_limit = 110             # 100 learners + staff
c.JupyterHub.concurrent_spawn_limit = 30           # a class starting at once queues, not fails
c.JupyterHub.bind_url = "http://0.0.0.0:8000"
c.JupyterHub.hub_ip = "0.0.0.0"                    # the servers on compute nodes call back to the hub

# -- where: each server is a Slurm job running the course image -------------------------------------
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
# The course into the learner's home, never overwriting their work.
mkdir -p "$HOME/gpu-cluster-course"
apptainer exec """ + COURSE_SIF + """ sh -c 'cp -rn /opt/course/chapters /opt/course/labs /opt/course/classroom "$HOME/gpu-cluster-course/"'
trap 'echo SIGTERM received' TERM
{{prologue}}
# The host's Slurm client stays usable from the server's terminal: sbatch/squeue and the Slurm
# configuration are bound into the container.
{{srun}} apptainer exec --bind """ + SLURM_BINDS + """ \\
    --env COURSE_SIF=""" + COURSE_SIF + """ """ + COURSE_SIF + """ {{cmd}}
echo "jupyterhub-singleuser ended gracefully"
{{epilogue}}
"""

# -- idle servers are stopped (the Slurm allocation is released) ------------------------------------
c.JupyterHub.services = [
    {"name": "idle-culler", "command": ["python3", "-m", "jupyterhub_idle_culler", "--timeout=3600"]},
]
c.JupyterHub.load_roles = [
    {"name": "idle-culler", "services": ["idle-culler"],
     "scopes": ["list:users", "read:users:activity", "read:servers", "delete:servers"]},
]
