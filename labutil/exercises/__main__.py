"""Instructors' solutions view: ``python -m labutil.exercises --solutions ch01 [ch04 ...]``."""

import argparse

from . import chapter_exercises, load_all


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description="Print the worked solutions of the course's exercises.")
    p.add_argument("--solutions", nargs="*", metavar="CHAPTER", default=None,
                   help="chapters to print (e.g. ch01); all when none given")
    args = p.parse_args(argv)
    if args.solutions is None:
        p.print_help()
        return 0
    chapters = args.solutions or sorted({k.split(".")[0] for k in load_all()})
    for ch in chapters:
        for ex in chapter_exercises(ch):
            print(f"## {ex.key}: {ex.prompt}")
            ex.solution()
            print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
