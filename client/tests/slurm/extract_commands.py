#!/usr/bin/env python3
"""Extracts the options of sdiag, sreport, sstat, sbcast and sattach from
Slurm's man pages into <cmd>.options (one long name a line, TAB, its short
letter if it has one). Run by hand from this directory:

    python3 extract_commands.py /path/to/slurm.git [tag]

where the path is a git directory holding Slurm (bare is fine). Standard
library only; CI does not run it, the Rust tests read its output.
"""
import re
import subprocess
import sys

COMMANDS = ["sdiag", "sreport", "sstat", "sbcast", "sattach"]
# An option as the man pages set it: \fB\-\-name\fR or \f3\-\-name\fP.
OPT = re.compile(r"\\f[B3]((?:\\-){1,2}[A-Za-z0-9][A-Za-z0-9_\\-]*)\\f[RP]")


def options(page):
    """(long, short) pairs from the first line after each .TP."""
    out, lines = [], page.splitlines()
    for i, line in enumerate(lines[:-1]):
        if not line.startswith(".TP"):
            continue
        names = [m.replace("\\-", "-") for m in OPT.findall(lines[i + 1])]
        shorts = [n[1:] for n in names if not n.startswith("--")]
        longs = [n[2:] for n in names if n.startswith("--")]
        short = shorts[0] if shorts else ""
        for name in longs or ([""] if short else []):
            pair = (name, short)
            if pair not in out:
                out.append(pair)
    return out


def main():
    repo = sys.argv[1] if len(sys.argv) > 1 else "/work/.mirror/SchedMD+slurm/repo"
    tag = sys.argv[2] if len(sys.argv) > 2 else "slurm-25-05-8-1"
    for cmd in COMMANDS:
        path = f"doc/man/man1/{cmd}.1"
        page = subprocess.run(["git", "-C", repo, "show", f"{tag}:{path}"],
                              check=True, capture_output=True, text=True).stdout
        with open(f"{cmd}.options", "w") as f:
            f.write(f"# from SchedMD/slurm {tag} {path} (extracted by extract_commands.py)\n")
            for name, short in options(page):
                f.write(f"{name}\t{short}\n" if short else f"{name}\n")


if __name__ == "__main__":
    main()
