"""``python -m labutil <command>``: course command-line tools.

Commands: ``doctor`` (environment report for the labs, see ``labutil.machine.doctor``); ``triage`` (layered
fault localisation of pasted logs and tool outputs, see ``labutil.troubleshoot.triage``).
"""

from __future__ import annotations

import sys

__all__ = ["USAGE", "main"]

USAGE = ("usage: python -m labutil doctor [--json] [--no-torch]\n"
         "       python -m labutil triage [--json] [--symptom TEXT] FILE... | -")


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv:  # a usage error: usage on stderr, exit status 2 (as argparse does)
        print(USAGE, file=sys.stderr)
        return 2
    if argv[0] in ("-h", "--help"):
        print(USAGE)
        return 0
    if argv[0] == "doctor":
        from .machine.doctor import main as doctor_main

        return doctor_main(argv[1:])
    if argv[0] == "triage":
        from .troubleshoot.triage import cli_main as triage_main

        return triage_main(argv[1:])
    print(f"unknown command {argv[0]!r}\n{USAGE}", file=sys.stderr)
    return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
