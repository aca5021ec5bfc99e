#!/usr/bin/env python3
"""Lists the options of sbatch, srun and salloc from Slurm's man pages.

Run by hand (CI does not): reads doc/man/man1/<cmd>.1 at the tag from a bare
mirror of SchedMD/slurm and writes <cmd>.options beside this script: one long
name a line, with its short letter after a tab when it has one. An option is
the first line after a top-level `.TP` (not inside `.RS`/`.RE`) of the
OPTIONS section that starts with a bold `-`.

    python3 extract_options.py [/work/.mirror/SchedMD+slurm/repo] [slurm-25-05-8-1]
"""
import os
import re
import subprocess
import sys

REPO = sys.argv[1] if len(sys.argv) > 1 else "/work/.mirror/SchedMD+slurm/repo"
TAG = sys.argv[2] if len(sys.argv) > 2 else "slurm-25-05-8-1"
HERE = os.path.dirname(os.path.abspath(__file__))

# "\fB\-A\fR, \fB\-\-account\fR=<...>": the bold words of the line.
BOLD = re.compile(r"\\fB(.*?)\\f[RPI]")


def names(line):
    """The (long, short) a definition line names, or None."""
    words = [w.replace("\\-", "-").strip() for w in BOLD.findall(line)]
    words = " ".join(w for w in words if w.startswith("-"))
    # "-H, --hold" may be one bold run or two.
    longs = re.findall(r"(?<![\w-])--([A-Za-z0-9][A-Za-z0-9-]*)", words)
    shorts = re.findall(r"(?<![\w-])-([A-Za-z0-9])(?![\w-])", words)
    if not longs:
        return None
    return longs[0], (shorts[0] if shorts else "")


def extract(cmd):
    path = f"doc/man/man1/{cmd}.1"
    text = subprocess.run(
        ["git", "-C", REPO, "show", f"{TAG}:{path}"], check=True, capture_output=True, text=True
    ).stdout
    out, depth, section, after_tp = [], 0, "", False
    for line in text.splitlines():
        if line.startswith(".SH"):
            section, depth = line[3:].strip().strip('"'), 0
            continue
        if line.startswith(".RS"):
            depth += 1
        elif line.startswith(".RE"):
            depth = max(0, depth - 1)
        elif line.startswith(".TP"):
            after_tp = depth == 0 and section == "OPTIONS"
            continue
        elif after_tp and not line.startswith("."):
            after_tp = False
            got = names(line)
            if got and got[0] not in [o for o, _ in out]:
                out.append(got)
    with open(os.path.join(HERE, f"{cmd}.options"), "w") as f:
        f.write(f"# from SchedMD/slurm {TAG} {path} (extracted by extract_options.py)\n")
        for long, short in out:
            f.write(f"{long}\t{short}\n" if short else f"{long}\n")
    print(f"{cmd}: {len(out)} options")


for cmd in ("sbatch", "srun", "salloc"):
    extract(cmd)
