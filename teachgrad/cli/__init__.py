"""The ``teachgrad`` command, for instructors (also ``python -m teachgrad``).

    teachgrad lessons DIR           # the lessons, solved, as the course ships them
    teachgrad student-edition DIR   # nbgrader's student edition (stubs, no solutions)
    teachgrad otter DIR             # each lesson in otter-grader's format
    teachgrad doctor                # what this environment has and lacks

The lessons come from the installed package (a wheel carries them) or, in a checkout,
from the repository's notebooks/ (``teachgrad.course.files``). A command that writes
files wants a new or empty DIR, so nothing of the instructor's is overwritten; a bad
argument stops the command with one line saying what to do, and exit status 2.
"""
import argparse
import sys

from .._version import __version__
from . import commands, doctor


def parser():
    """The command line: one subcommand per job."""
    top = argparse.ArgumentParser(
        prog="teachgrad", description="Lay out the teachgrad course and check where it runs.",
        epilog="Each command that writes files wants a new or empty DIR.")
    top.add_argument("--version", action="version", version=f"teachgrad {__version__}")
    jobs = top.add_subparsers(dest="command", metavar="COMMAND", title="commands")
    for name, run, help in (
            ("lessons", commands.lessons, "write the course's lessons (solved) into DIR"),
            ("student-edition", commands.student_edition,
             "write nbgrader's student edition into DIR (needs the grading extra)"),
            ("otter", commands.otter,
             "write each lesson in otter-grader's format into DIR (needs the grading extra)")):
        job = jobs.add_parser(name, help=help, description=help)
        job.add_argument("dir", metavar="DIR", help="a new or empty folder")
        job.set_defaults(run=run)
    check = jobs.add_parser("doctor", help="say what this environment has and lacks",
                            description=doctor.__doc__.splitlines()[0])
    check.set_defaults(run=lambda args: doctor.main())
    return top


def main(argv=None):
    """Run the command line ``argv`` (``sys.argv[1:]`` by default); returns the exit status."""
    command_line = parser()
    args = command_line.parse_args(argv)
    if args.command is None:
        command_line.print_help()
        return 2
    try:
        return args.run(args) or 0
    except commands.CommandError as error:
        print(f"teachgrad {args.command}: {error}", file=sys.stderr)
        return 2
