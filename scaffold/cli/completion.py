"""`pyop completion <shell>`: the shell's completion script on stdout, as Kubebuilder's `completion` prints it.

The script is typer's (what `--show-completion` prints), asked for by shell name rather than guessed from the
parent process, so it can be saved or sourced from any shell: `source <(pyop completion bash)`.
"""

from __future__ import annotations

from typing import Any

PROG_NAME = "pyop"
COMPLETE_VAR = "_PYOP_COMPLETE"  # the variable typer's completion of `pyop` reads (`_<PROG>_COMPLETE`)
SHELLS = ("bash", "zsh", "fish", "powershell")


def completion_script(command: Any, shell: str) -> str:
    """The completion script of `command` (the click command of the pyop app) for `shell`, ending in a newline."""
    from typer.completion import completion_init, shell_completion

    completion_init()  # typer's completion classes, registered by shell name
    complete_class = shell_completion.get_completion_class(shell)
    if complete_class is None or shell not in SHELLS:
        raise ValueError(f"no completion for shell {shell!r}: pyop completes {', '.join(SHELLS)}")
    script: str = complete_class(command, {}, PROG_NAME, COMPLETE_VAR).source()
    return script if script.endswith("\n") else script + "\n"
