"""The ``rgate`` console script: the command line, from the library.

maturin cannot put a binary and a PyO3 module in one wheel
(PyO3/maturin#368); the wheel's ``rgate`` command is this script, which
runs the library's command-line entry point (the one ``src/main.rs``
runs), so ``pip install rgate`` still gives the CLI.
"""

import signal
import sys


def main() -> None:
    # Python turns Ctrl-C into KeyboardInterrupt, checked only when Rust
    # code returns: give SIGINT back its default, so Ctrl-C ends the
    # command as it ends the binary.
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    from rgate._rgate import main as _main

    sys.exit(_main(["rgate", *sys.argv[1:]]))


if __name__ == "__main__":
    main()
