#!/usr/bin/env python3
"""Extracts the output fields of squeue, sacct and sinfo from Slurm's man pages.

Run by hand (CI does not): python3 extract_fields.py [GIT_DIR] [TAG]
It reads doc/man/man1/{squeue,sacct,sinfo}.1 at TAG from a bare clone of
SchedMD/slurm and rewrites, beside this script:
  squeue.fields, sinfo.fields   the -O/--Format names
  squeue.letters, sinfo.letters the -o/--format %letters
  sacct.fields                  the --format names (JOB ACCOUNTING FIELDS)
  scontrol.keys                 the keys of update job|node|partition (KEY<TAB>entity)
  sacctmgr.keys                 the keys of the account, user and qos specifications
                                (KEY<TAB>entity; the association ones belong to both)
  scontrol.commands, sacctmgr.commands, sacctmgr.entities  the subcommands and entities
  sshare.options, sprio.options the options (LONG<TAB>SHORT letter, if any)
  sshare.fields, sprio.letters  sshare's output fields (spaces dropped) and sprio's -o letters
Standard library only.
"""

import os
import re
import subprocess
import sys

GIT = sys.argv[1] if len(sys.argv) > 1 else "/work/.mirror/SchedMD+slurm/repo"
TAG = sys.argv[2] if len(sys.argv) > 2 else "slurm-25-05-8-1"
HERE = os.path.dirname(os.path.abspath(__file__))

# A list entry: `.TP` then the name in bold (\fB..\fR or \f3..\fP).
NAME = re.compile(r"^\\f[B3](.+?)\\f[RP]\s*$")
# A key entry: `.TP` then `\\fBKey\\fR`, `\\fBKey\\fR=<...>` or `\\fBKey\\fR[=...]`.
KEY = re.compile(r"^\\f[B3]([A-Za-z][A-Za-z0-9_\\-]*?)\\f[RP]\s*(=|\[=|<|$)")


def page(cmd):
    path = f"doc/man/man1/{cmd}.1"
    text = subprocess.run(
        ["git", "-C", GIT, "show", f"{TAG}:{path}"], check=True, capture_output=True, text=True
    ).stdout
    return path, text.splitlines()


def section(lines, start, end):
    """The lines after the first matching `start` up to the next matching `end`."""
    i = next(n for n, l in enumerate(lines) if re.search(start, l))
    j = next(n for n in range(i + 1, len(lines)) if re.search(end, lines[n]))
    return lines[i + 1 : j]


def entries(lines, pattern=NAME):
    """The list's entries at its outermost level (a nested `.RS` list, such as
    Timelimit's values in sacct.1, is a description, not fields)."""
    found, depth = [], 0
    for prev, line in zip(lines, lines[1:]):
        depth += prev.startswith(".RS") - prev.startswith(".RE")
        m = pattern.match(line)
        if prev.startswith(".TP") and m:
            found.append((depth, m.group(1).replace("\\-", "-").replace("\\fR", "").strip()))
    top = min((d for d, _ in found), default=0)
    out = []
    for d, name in found:
        if d == top and name not in out:
            out.append(name)
    return out


def write(name, path, names):
    with open(os.path.join(HERE, name), "w") as f:
        f.write(f"# from SchedMD/slurm {TAG} {path} (extracted by extract_fields.py)\n")
        for n in names:
            f.write(n + "\n")
    print(f"{name}: {len(names)}")


def letters(names):
    return [n[1:] for n in names if re.fullmatch(r"%\S", n)]


def fields(names):
    return [n for n in names if re.fullmatch(r"[A-Za-z][A-Za-z0-9_-]*", n)]


def write_pairs(name, path, pairs):
    with open(os.path.join(HERE, name), "w") as f:
        f.write(f"# from SchedMD/slurm {TAG} {path} (extracted by extract_fields.py)\n")
        for key, entity in pairs:
            f.write(f"{key}\t{entity}\n")
    print(f"{name}: {len(pairs)}")


def keys(lines, start, entity):
    return [(k, entity) for k in entries(section(lines, start, r"^\.SH "), KEY)]


def commands(lines):
    """The COMMANDS section's words at its outer level (each entry's first bold word)."""
    return entries(lines, re.compile(r"^\\f[B3]([a-z_]+)"))


def options(lines):
    """`(long, short)` of each entry of an OPTIONS section at its outer level."""
    found, depth = [], 0
    for prev, line in zip(lines, lines[1:]):
        depth += prev.startswith(".RS") - prev.startswith(".RE")
        longs = re.findall(r"\\-\\-([a-z][a-z0-9]*(?:\\-[a-z0-9]+)*)", line)
        short = re.match(r"^\\f[B3]\\-([A-Za-z])\\f[RP]", line)
        if prev.startswith(".TP") and longs:
            found.append((depth, longs[0].replace("\\-", "-"), short.group(1) if short else ""))
    top = min((d for d, _, _ in found), default=0)
    out = []
    for d, name, short in found:
        if d == top and name not in [o[0] for o in out]:
            out.append((name, short))
    return out


def main():
    path, sq = page("squeue")
    write("squeue.letters", path, letters(entries(section(sq, r"^\\fB\\-o\\fR", r"^\\fB\\-O\\fR"))))
    write("squeue.fields", path, fields(entries(section(sq, r"^\\fB\\-O\\fR", r"^\\fB\\-\\-help\\fR"))))
    path, si = page("sinfo")
    write("sinfo.letters", path, letters(entries(section(si, r"^\\fB\\-o\\fR", r"^\\fB\\-O\\fR"))))
    write("sinfo.fields", path, fields(entries(section(si, r"^\\fB\\-O\\fR", r"^\\fB\\-\\-help\\fR"))))
    path, sa = page("sacct")
    acct = section(sa, r'^\.SS "Job Accounting Fields"', r"^\.SH ")
    write("sacct.fields", path, [n for n in fields(entries(acct)) if n.upper() != "ALL"])
    path, sc = page("scontrol")
    write("scontrol.commands", path, commands(section(sc, r'^\.SH "COMMANDS"', r"^\.SH ")))
    write_pairs(
        "scontrol.keys",
        path,
        keys(sc, r'^\.SH "JOBS \\- SPECIFICATIONS FOR UPDATE', "job")
        + keys(sc, r'^\.SH "NODES \\- SPECIFICATIONS FOR UPDATE', "node")
        + keys(sc, r'^\.SH "PARTITIONS \\- SPECIFICATIONS FOR CREATE AND UPDATE', "partition"),
    )
    for cmd in ("sshare", "sprio"):
        path, lines = page(cmd)
        write_pairs(f"{cmd}.options", path, options(section(lines, r'^\.SH "OPTIONS"', r"^\.SH ")))
    path, ss = page("sshare")
    out = section(ss, r'^\.SH "SSHARE OUTPUT FIELDS"', r"^\.SH ")
    write("sshare.fields", path, [n.replace(" ", "") for n in entries(out) if re.fullmatch(r"[A-Za-z ]+", n)])
    path, sp = page("sprio")
    write("sprio.letters", path, letters(entries(section(sp, r"^\\fB\\-o\\fR", r"^\\fB\\-\\-help\\fR"))))
    path, sm = page("sacctmgr")
    write("sacctmgr.commands", path, commands(section(sm, r'^\.SH "COMMANDS"', r"^\.SH ")))
    write("sacctmgr.entities", path, [n.lower() for n in entries(section(sm, r'^\.SH "ENTITIES"', r"^\.SH "))])
    write_pairs(
        "sacctmgr.keys",
        path,
        keys(sm, r'^\.SH "GENERAL SPECIFICATIONS FOR ASSOCIATION', "association")
        + keys(sm, r'^\.SH "SPECIFICATIONS FOR ACCOUNTS', "account")
        + keys(sm, r'^\.SH "SPECIFICATIONS FOR USERS', "user")
        + keys(sm, r'^\.SH "SPECIFICATIONS FOR QOS', "qos"),
    )


if __name__ == "__main__":
    main()
