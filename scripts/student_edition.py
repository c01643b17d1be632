"""Build the student edition of the course with nbgrader (make student).

    python scripts/student_edition.py [OUT]      # OUT defaults to build/student
    python scripts/student_edition.py OUT --lessons DIR   # another course's lessons
    python scripts/student_edition.py --course DIR        # an nbgrader course directory

A thin caller, on this repository's notebooks/ and course/, of
teachgrad.course.student_edition, which says what the build does and checks (nbgrader's
generate_assignment, each lesson its own assignment; the lessons' metadata checked before,
the edition searched for solution lines after). ``teachgrad student-edition DIR`` is the same
build for a pip-installed course. A problem stops the build (exit status 1) with one line
per problem and nothing written.
"""
import argparse
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))      # this repository's teachgrad, installed or not

from teachgrad.course.student_edition import (BEGIN, END, BuildError,  # noqa: E402,F401
                                              _solution_lines, build, leaks, lessons,
                                              make_course, nbgrader, problems)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", default=str(ROOT / "build" / "student"))
    parser.add_argument("--lessons", default=str(ROOT / "notebooks"),
                        help="the folder of the lessons (NN_name.ipynb)")
    parser.add_argument("--course", metavar="DIR", help="instead: lay DIR out as an nbgrader "
                        "course directory (one assignment per lesson) and stop")
    args = parser.parse_args()
    if args.course:
        names = make_course(args.course, lessons(pathlib.Path(args.lessons)))
        print(f"nbgrader course in {args.course}: {len(names)} assignments, {names[0]} ...")
        return
    try:
        written = build(args.out, lessons(pathlib.Path(args.lessons)))
    except BuildError as error:
        sys.exit(f"student edition not built:\n{error}")
    print(f"student edition: {len(written)} lessons in {args.out}")


if __name__ == "__main__":
    main()
