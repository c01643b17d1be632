"""A lesson in otter-grader's notebook format, for ``otter assign`` (the otter route).

    python scripts/otter_edition.py OUT [LESSON.ipynb ...]   # all lessons by default
    cd OUT/01_derivatives_on_a_tape && otter assign 01_derivatives_on_a_tape.ipynb dist

A thin caller of teachgrad.course.otter_edition, which says what the conversion does
(``teachgrad otter DIR`` is the same for a pip-installed course), on this repository's
notebooks/. tests/test_otter.py puts lessons 1 and 7 through otter and converts every one.
"""
import argparse
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))      # this repository's teachgrad, installed or not

from teachgrad.course.otter_edition import (MARKER, STUB, grading, is_check,  # noqa: E402,F401
                                            otter_master, question_name, write)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("lessons", nargs="*",
                        default=sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")))
    args = parser.parse_args()
    try:
        written = write(args.out, args.lessons)
    except ValueError as error:
        sys.exit(f"otter edition not written: {error}")
    print(f"otter masters: {len(written)} lessons in {args.out}; run `otter assign` in each")


if __name__ == "__main__":
    main()
