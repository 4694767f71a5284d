"""``python -m labutil.grading``: graded classes with nbgrader (classroom/README.md).

    python -m labutil.grading assignments --out assignments [--chapters ch01 ch02] [--nbgrader nbgrader]
    python -m labutil.grading learner-build --out build/learner

``assignments`` writes the nbgrader course (source notebooks with solutions and hidden tests) and,
where nbgrader is installed, runs ``nbgrader generate_assignment`` for each chapter (release/, no
solutions). ``learner-build`` writes the labutil package with the exercise answers withheld.
Errors are one line on stderr and exit status 2.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

from . import export

__all__ = ["main"]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m labutil.grading", description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("assignments", help="export the chapters' exercises as an nbgrader course")
    a.add_argument("--out", type=Path, default=Path("assignments"))
    a.add_argument("--chapters", nargs="*", metavar="CHAPTER", help="e.g. ch01 ch02 (default: every chapter)")
    a.add_argument("--points", type=float, default=export.POINTS, help="points per exercise (default 1)")
    a.add_argument("--nbgrader", default="nbgrader",
                   help="nbgrader command for the release (default: nbgrader on PATH; 'none' to skip)")
    b = sub.add_parser("learner-build", help="labutil with the exercise answers withheld (graded classes)")
    b.add_argument("--out", type=Path, required=True)
    args = p.parse_args(argv)
    try:
        if args.cmd == "learner-build":
            info = export.learner_build(args.out)
            print(f"{args.out}/labutil: {info['withheld']} exercise answers withheld in {info['chapters']} chapters "
                  f"(pip install {args.out} or put it first on PYTHONPATH)")
            return 0
        if args.points <= 0:
            raise ValueError(f"--points must be > 0; got {args.points}")
        written = export.write_course(args.out, args.chapters, args.points)
        print(f"{args.out}/source: {len(written)} assignments with solutions and hidden autograder tests")
        nbgrader = None if args.nbgrader == "none" else shutil.which(args.nbgrader)
        if nbgrader is None:
            print(f"release: nbgrader not found ({args.nbgrader}); pip install '.[classroom]', then "
                  f"cd {args.out} && nbgrader generate_assignment <chapter>")
            return 0
        done = export.release(args.out, list(written), nbgrader)
        print(f"{args.out}/release: {len(done)} assignments without solutions (nbgrader generate_assignment)")
        return 0
    except (KeyError, ValueError, RuntimeError, OSError) as exc:
        print(f"python -m labutil.grading: error: {exc.args[0] if exc.args else exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
