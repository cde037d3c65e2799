"""``python -m rgate``: the ``rgate`` command, for environments where the
console script is not on PATH (a notebook's kernel, ``pipx run`` without
``--spec``, a venv used without activating it)."""

from rgate._cli import main

if __name__ == "__main__":
    main()
