"""Instructors' solutions view: ``python -m labutil.exercises --solutions ch01 [ch04 ...]``.

An unknown chapter prints one line naming the chapters that exist and exits with status 2.
"""

import argparse
import sys

from . import ExerciseKeyError, chapter_exercises, chapters

__all__ = ["main"]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m labutil.exercises",
                                description="Print the worked solutions of the course's exercises.")
    p.add_argument("--solutions", nargs="*", metavar="CHAPTER", default=None,
                   help="chapters to print (e.g. ch01); all when none given")
    args = p.parse_args(argv)
    if args.solutions is None:
        p.print_help()
        return 0
    wanted = args.solutions or chapters()
    try:
        selected = [(ch, chapter_exercises(ch)) for ch in wanted]
    except ExerciseKeyError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        for _ch, exercises in selected:
            for ex in exercises:
                print(f"## {ex.key} ({ex.kind}): {ex.prompt}")
                print(ex.solution_report())
                print()
    except BrokenPipeError:  # e.g. piped into `head`: stop quietly
        sys.stderr.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
