"""`python -m repocontext.cli`: the `repocontext` program, as the console script runs it."""

from . import run

if __name__ == "__main__":
    run()
