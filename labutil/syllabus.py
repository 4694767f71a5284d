"""The learner-facing syllabus, ``docs/SYLLABUS.md``, generated from what ships with the course.

Sources: the course map (``labutil/data/course.toml``: modules, phases, prerequisites, English
chapter titles) and the first cell of every chapter and lab (``chapters/chNN_*.py``,
``labs/labNN_*.py``: the title, the "where it sits" note and the learning objectives). Nothing is
written by hand twice: change a chapter's objectives and regenerate.

    python -m labutil.syllabus            # write docs/SYLLABUS.md
    python -m labutil.syllabus --check    # exit 1 when docs/SYLLABUS.md is out of date (tests do this)
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from . import coursemap
from .fileio import write_text_atomic

__all__ = ["ROOT", "SYLLABUS", "Intro", "read_intro", "syllabus_markdown", "main"]

ROOT = Path(__file__).resolve().parent.parent
SYLLABUS = ROOT / "docs" / "SYLLABUS.md"
PHASES_ZH = {"design": "设计", "deploy/verify": "部署与验证", "operate": "运维"}
SEED_COURSES = ("《大规模GPU集群部署核心概念速览》", "《AI训练推理集群》", "《AI算力集群》")


class Intro:
    """The first markdown cell of a notebook source: title, context note, objectives."""

    def __init__(self, title: str, note: str, objectives: list[str]):
        self.title, self.note, self.objectives = title, note, objectives


def _markdown_cells(text: str) -> list[list[str]]:
    """The markdown cells of a py:percent source, in order, each as its lines without the ``# `` prefix."""
    cells: list[list[str]] = []
    inside = False
    for line in text.splitlines():
        if line.startswith("# %%"):
            inside = line.strip() == "# %% [markdown]"
            if inside:
                cells.append([])
            continue
        if inside:
            if line == "#":
                cells[-1].append("")
            elif line.startswith("# "):
                cells[-1].append(line[2:])
            else:
                inside = False
    return cells


def _first_markdown_cell(text: str) -> list[str]:
    cells = _markdown_cells(text)
    return cells[0] if cells else []


_ITEM = re.compile(r"^(?:- |\d+\. )(.*)$")


def _join(a: str, b: str) -> str:
    """Join two wrapped pieces of text: no space between Chinese characters or punctuation."""
    a, b = a.rstrip(), b.strip()
    if not a or not b:
        return a + b
    return a + ("" if not a[-1].isascii() or not b[0].isascii() else " ") + b


def read_intro(path: Path) -> Intro:
    """Title (``# ...``), the blockquote under it, and the items of ``## 学习目标`` / ``## 实验目标``."""
    lines = _first_markdown_cell(Path(path).read_text(encoding="utf-8"))
    title = next((ln[2:].strip() for ln in lines if ln.startswith("# ")), "")
    if not title:
        raise ValueError(f"{path}: the first markdown cell has no '# ' title")
    note = ""
    for ln in lines:
        if ln.startswith(">"):
            note = _join(note, ln[1:])
    objectives: list[str] = []
    in_goals = False
    # the goals may sit in a later markdown cell (a lab that puts its settings cell first)
    goal_cell = next((c for c in _markdown_cells(Path(path).read_text(encoding="utf-8"))
                      if any(ln.startswith("## ") and ln[3:].strip() in ("学习目标", "实验目标") for ln in c)), lines)
    for ln in goal_cell:
        if ln.startswith("## "):
            in_goals = ln[3:].strip() in ("学习目标", "实验目标")
            continue
        if not in_goals:
            continue
        m = _ITEM.match(ln)
        if m:
            objectives.append(m.group(1).strip())
        elif ln.startswith("  ") and objectives:      # a wrapped item
            objectives[-1] = _join(objectives[-1], ln)
    if not objectives:
        raise ValueError(f"{path}: no items under '## 学习目标' / '## 实验目标'")
    return Intro(title, note, [o.rstrip("；;。") + "。" for o in objectives])


def _chapter_paths(root: Path) -> dict[int, Path]:
    out = {}
    for p in sorted((root / "chapters").glob("ch[0-9][0-9]_*.py")):
        out[int(p.name[2:4])] = p
    return out


def syllabus_markdown(root: Path = ROOT) -> str:
    """The text of docs/SYLLABUS.md."""
    root = Path(root)
    mods = coursemap.modules()
    en = coursemap.chapter_titles()
    chapters = _chapter_paths(root)
    labs = sorted((root / "labs").glob("lab[0-9][0-9]_*.py"))
    title_of = {m.id: m.title_zh for m in mods}
    out = ["# 课程大纲：大规模 GPU 集群部署", "",
           "> 本文件由 `python -m labutil.syllabus` 从课程地图（`labutil/data/course.toml`）与每一章、每个实验开头的"
           "学习目标生成；请改源文件后重新生成，不要手改（`tests/test_syllabus.py` 检查两者一致）。", "",
           "## 这门课讲什么、适合谁", "",
           "这门课带你从零走完一座 GPU 集群的一生：**设计**（要多少卡、什么网络、什么存储、多大的电）、"
           "**部署**（上架、容器、调度、训练框架）、**验证**（NCCL 带宽验收、健康检查）和**运维**（推理、监控、"
           "可靠性、故障定位、多租户）。每一章都用可以改参数的模型算出关键数字，用真实工具的输出格式练习读数，"
           "并用自动判分的练习检查理解；六个动手实验在有 GPU 的机器上测真实数字，没有 GPU 时走标明的 CPU 路径。", "",
           "适合需要真正动手搭建和运维 AI 基础设施的运维工程师、平台工程师与算法工程师。需要的基础：会用 Linux 命令行、"
           "读得懂简单的 Python；GPU、RDMA、Slurm 与 Kubernetes 的概念在课程中从头讲起。", "",
           f"课程以三门课程导入为起点并加以扩展：{'、'.join(SEED_COURSES)}。", "",
           "## 课程结构", "",
           f"共 {len(mods)} 个模块、{sum(len(m.chapters) for m in mods)} 章、{len(labs)} 个实验，"
           "按「设计 → 部署与验证 → 运维」的顺序组织；后面的模块用到前面模块的模型和结论。", "",
           "| 模块 | 阶段 | 章 | 先学 |", "| --- | --- | --- | --- |"]
    for m in mods:
        req = "、".join(f"模块{r}" for r in m.requires) or "—"
        out.append(f"| 模块{m.id} {m.title_zh}（{m.title_en}） | {PHASES_ZH.get(m.phase, m.phase)} | "
                   f"第 {m.chapters[0]}–{m.chapters[-1]} 章 | {req} |")
    out.append("")
    for m in mods:
        req = "、".join(f"模块{r}「{title_of[r]}」" for r in m.requires)
        out += [f"## 模块{m.id}：{m.title_zh}（{m.title_en}）", "",
                f"阶段：{PHASES_ZH.get(m.phase, m.phase)}。" + (f"先学：{req}。" if req else "没有前置模块。"), ""]
        for c in m.chapters:
            if c not in chapters:
                raise ValueError(f"course.toml lists chapter {c}, but chapters/ch{c:02d}_*.py does not exist")
            intro = read_intro(chapters[c])
            out += [f"### {intro.title}", "", f"*{en.get(c, '')}* · `chapters/{chapters[c].with_suffix('.ipynb').name}`",
                    "", "学完本章，你应该能够：", ""]
            out += [f"- {o}" for o in intro.objectives]
            out.append("")
    out += ["## 动手实验", "",
            "实验在有 2–4 张 GPU 的机器上测真实的 NCCL、GEMM、显存带宽、存储与 DDP 数字；没有 GPU 时用 2 个 gloo 进程的 "
            "CPU 路径跑同样的测量方法（结果会标明不是 GPU 数字）。多节点版本见 `labs/README.md`（Slurm 模板）。", ""]
    for p in labs:
        intro = read_intro(p)
        out += [f"### {intro.title}", "", f"`labs/{p.with_suffix('.ipynb').name}`", ""]
        if intro.note:
            out += [intro.note, ""]
        out += ["实验目标：", ""] + [f"- {o}" for o in intro.objectives] + [""]
    out += ["## 怎样学、怎样检查自己", "",
            "- **运行环境**：`make lab`（或 `python -m labutil.serve`）在本机打开 JupyterLab；所有章节在没有 GPU 的笔记本电脑上"
            "即可运行，实验在 GPU 机器上给出真实数字（`python -m labutil doctor` 先做环境体检）。",
            "- **每一章**：先读原理，再拖动交互图里的滑块看数字怎样变化，然后做章末练习："
            "`exercise(\"chNN.k\").check(答案)` 当场判分，`hint()` 给提示，答对之前不显示参考值。",
            "- **每个实验**：按实验目标运行、记录结果文件（`labs/_runs/`），再回答实验里的自测题（读取你自己的结果判分）。",
            "- **讲师**：`make editions` 生成不含答案的学员版与带参考解答的讲师版；课堂部署见 `classroom/README.md`。", ""]
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m labutil.syllabus", description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 when docs/SYLLABUS.md differs from the sources")
    ap.add_argument("--out", type=Path, default=SYLLABUS)
    a = ap.parse_args(argv)
    text = syllabus_markdown()
    if a.check:
        current = a.out.read_text(encoding="utf-8") if a.out.exists() else ""
        if current != text:
            print(f"{a.out} is out of date: run `python -m labutil.syllabus`", file=sys.stderr)
            return 1
        print(f"{a.out} is up to date")
        return 0
    write_text_atomic(a.out, text)
    print(a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
