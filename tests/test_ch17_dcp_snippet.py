"""The torch.distributed.checkpoint snippet of ch17 §4.1 runs: save, async_save, load after zeroing.

The code is extracted from the chapter's markdown (so the text cannot drift from what was tested)
and run in a subprocess with a one-process gloo group. Skipped where torch is not installed.
"""
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.torch

CHAPTER = Path(__file__).resolve().parents[1] / "chapters" / "ch17_checkpointing.py"

HARNESS = textwrap.dedent('''
    import os, socket, tempfile
    import torch.distributed as dist
    s = socket.socket(); s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]; s.close()
    os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"] = "127.0.0.1", str(port)
    dist.init_process_group("gloo", rank=0, world_size=1)
    model = torch.nn.Linear(16, 16); opt = torch.optim.AdamW(model.parameters())
    model(torch.randn(4, 16)).sum().backward(); opt.step()
    root = tempfile.mkdtemp()
    save(model, opt, 100, root)
    save(model, opt, 200, root, async_save=True).result()
    w = model.weight.detach().clone(); m = opt.state[model.weight]["exp_avg"].clone()
    torch.nn.init.zeros_(model.weight)
    step = load(model, opt, f"{root}/step{200:08d}")
    files = sorted(os.listdir(f"{root}/step{200:08d}"))
    assert step == 200, step
    assert torch.equal(model.weight, w) and torch.equal(opt.state[model.weight]["exp_avg"], m)
    assert ".metadata" in files and any(f.endswith(".distcp") for f in files), files
    dist.destroy_process_group()
    print("OK")
''')


def _snippet() -> str:
    text = CHAPTER.read_text(encoding="utf-8")
    m = re.search(r"^# ```python\n(.*?)^# ```$", text[text.index("### 4.1"):], flags=re.M | re.S)
    assert m, "ch17 §4.1 has no python code block"
    return "\n".join(line[2:] if line.startswith("# ") else line.lstrip("#") for line in m.group(1).splitlines())


def test_snippet_is_extracted():
    code = _snippet()
    assert "dcp.async_save" in code and "dcp.load" in code and "def save" in code


def test_dcp_snippet_runs():
    pytest.importorskip("torch")
    pytest.importorskip("torch.distributed.checkpoint")
    r = subprocess.run([sys.executable, "-c", _snippet() + "\n" + HARNESS], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0 and r.stdout.strip().endswith("OK"), r.stderr[-2000:]
