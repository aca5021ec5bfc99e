//! `--multi-prog`: a file maps task ids to programs (Slurm's MULTIPLE
//! PROGRAM CONFIGURATION). Each line is `RANKS PROGRAM [ARGS...]`, RANKS a
//! list of ids and ranges (`0,2-3`) or `*` for the rest; `%t` is the task's
//! id and `%o` its offset in the line's ranks; `#` starts a comment. The
//! step's program becomes `/bin/sh -c` with a `case` on `SLURM_PROCID`, so
//! the agents run it as any step. `--task-prolog`/`--task-epilog` wrap the
//! step's program the same way ([`around`]).

/// The step's argv for configuration `text` (named `file` in messages);
/// `ntasks` (0: not known here) must each have a line.
pub fn argv(file: &str, text: &str, ntasks: u32) -> Result<Vec<String>, String> {
    let mut arms = String::new();
    let mut covered: Vec<u32> = vec![];
    let mut rest: Option<Vec<String>> = None;
    for (n, line) in text.lines().enumerate() {
        let at = |e: String| format!("--multi-prog: {file} line {}: {e}", n + 1);
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let mut words = split(line).map_err(at)?.into_iter();
        let ranks = words.next().unwrap_or_default();
        let ranks = ranks.as_str();
        let prog: Vec<String> = words.collect();
        if prog.is_empty() {
            return Err(at(format!("'{ranks}' has no program")));
        }
        if ranks == "*" {
            rest = Some(prog);
            continue;
        }
        for (offset, rank) in ids(ranks).map_err(at)?.into_iter().enumerate() {
            if covered.contains(&rank) {
                return Err(at(format!("task {rank} has two lines")));
            }
            covered.push(rank);
            let words: Vec<String> =
                prog.iter().map(|w| subst(w, &rank.to_string(), &offset.to_string())).collect();
            arms.push_str(&format!("{rank}) exec {};;\n", quoted(&words)));
        }
    }
    if let Some(missing) = (0..ntasks).find(|r| !covered.contains(r)).filter(|_| rest.is_none()) {
        return Err(format!("--multi-prog: {file} has no line for task {missing}"));
    }
    let fallback = match rest {
        // `*`: %t is the task's id, %o its offset among the rest (unknown here: the id).
        Some(words) => {
            let id = "'\"$SLURM_PROCID\"'";
            let words: Vec<String> = words.iter().map(|w| subst(&quote(w), id, id)).collect();
            format!("*) exec {};;\n", words.join(" "))
        }
        None => format!(
            "*) echo \"srun: error: {} has no line for task $SLURM_PROCID\" >&2; exit 1;;\n",
            quote(file)
        ),
    };
    let script = format!("case \"$SLURM_PROCID\" in\n{arms}{fallback}esac\n");
    Ok(vec!["/bin/sh".into(), "-c".into(), script, "srun-multi-prog".into()])
}

/// A line's words: blanks apart; `'...'` and `"..."` quote, `\` takes the next character.
fn split(line: &str) -> Result<Vec<String>, String> {
    let (mut out, mut cur, mut any, mut quote) = (vec![], String::new(), false, None::<char>);
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => cur.push(c),
            (None, '\'' | '"') => (quote, any) = (Some(c), true),
            (None, '\\') => {
                cur.extend(chars.next());
                any = true;
            }
            (None, c) if c.is_whitespace() => {
                if any {
                    out.push(std::mem::take(&mut cur));
                }
                any = false;
            }
            (None, c) => {
                cur.push(c);
                any = true;
            }
        }
    }
    if quote.is_some() {
        return Err("a quote is not closed".into());
    }
    if any {
        out.push(cur);
    }
    Ok(out)
}

/// `0,2-3`: the ids in order.
fn ids(ranks: &str) -> Result<Vec<u32>, String> {
    let bad = || format!("'{ranks}' is not a list of task ids (0,2-3) or *");
    let mut out = vec![];
    for part in ranks.split(',') {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        let (a, b): (u32, u32) = (a.parse().map_err(|_| bad())?, b.parse().map_err(|_| bad())?);
        if a > b || b - a >= 65_536 {
            return Err(bad());
        }
        out.extend(a..=b);
    }
    Ok(out)
}

fn subst(word: &str, id: &str, offset: &str) -> String {
    word.replace("%t", id).replace("%o", offset)
}

/// `--task-prolog`/`--task-epilog`: `argv` run by `/bin/sh` between them on
/// the node, as Slurm's slurmstepd runs them around each task: the prolog's
/// `export NAME=value`, `unset NAME` and `print TEXT` lines set the task's
/// environment or print; the epilog runs after the task, whose code stays.
pub fn around(prolog: Option<&str>, epilog: Option<&str>, argv: Vec<String>) -> Vec<String> {
    if prolog.is_none() && epilog.is_none() {
        return argv;
    }
    let mut script = String::new();
    if let Some(p) = prolog {
        script.push_str(&format!(
            "out=$({})\nwhile IFS= read -r l; do case $l in\n\
             'export '*) export \"${{l#export }}\";;\n'unset '*) unset \"${{l#unset }}\";;\n\
             'print '*) printf '%s\\n' \"${{l#print }}\";;\nesac; done <<SPUR_PROLOG\n$out\nSPUR_PROLOG\n",
            quote(p)
        ));
    }
    script.push_str("\"$@\"; rc=$?\n");
    if let Some(e) = epilog {
        script.push_str(&format!("{}\n", quote(e)));
    }
    script.push_str("exit $rc\n");
    let mut out = vec!["/bin/sh".to_string(), "-c".into(), script, "srun-task".into()];
    out.extend(argv);
    out
}

/// A word for sh, in single quotes.
fn quote(w: &str) -> String {
    format!("'{}'", w.replace('\'', "'\\''"))
}

fn quoted(words: &[String]) -> String {
    words.iter().map(|w| quote(w)).collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(argv: &[String], id: u32) -> String {
        let out = std::process::Command::new(&argv[0])
            .args(&argv[1..])
            .env("SLURM_PROCID", id.to_string())
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr)
    }

    #[test]
    fn each_task_runs_its_line_with_its_id_and_offset() {
        let conf = "# comment\n0 echo zero\n1-2,4 echo \"it's\" %t of %o\n* echo 'rest;x' %t\n";
        let argv = argv("mp.conf", conf, 6).unwrap();
        assert_eq!(run(&argv, 0), "zero\n");
        assert_eq!(run(&argv, 2), "it's 2 of 1\n", "words are the file's, quoted for sh");
        assert_eq!(run(&argv, 4), "it's 4 of 2\n");
        assert_eq!(run(&argv, 5), "rest;x 5\n", "the rest's words are quoted too");
        let argv = argv_or("mp.conf", "0 echo a\n", 0);
        assert!(run(&argv, 3).contains("has no line for task 3"));
    }

    fn argv_or(f: &str, t: &str, n: u32) -> Vec<String> {
        argv(f, t, n).unwrap()
    }

    #[test]
    fn a_task_prolog_sets_the_task_s_environment_and_the_epilog_keeps_its_code() {
        let dir = tempfile::tempdir().unwrap();
        let pro = dir.path().join("pro");
        std::fs::write(
            &pro,
            "#!/bin/sh\necho 'export GREETING=hello there'\necho 'print from the prolog'\necho junk\n",
        )
        .unwrap();
        let epi = dir.path().join("epi");
        std::fs::write(&epi, "#!/bin/sh\necho epilog >&2\nexit 9\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        for p in [&pro, &epi] {
            std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        let task = vec!["sh".to_string(), "-c".into(), "echo \"$GREETING\"; exit 3".into()];
        let argv = around(Some(&pro.display().to_string()), Some(&epi.display().to_string()), task.clone());
        let out = std::process::Command::new(&argv[0]).args(&argv[1..]).output().unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout), "from the prolog\nhello there\n");
        assert_eq!(String::from_utf8_lossy(&out.stderr), "epilog\n");
        assert_eq!(out.status.code(), Some(3), "the task's code, not the epilog's");
        assert_eq!(around(None, None, task.clone()), task);
    }

    #[test]
    fn bad_files_are_named_with_their_line() {
        assert_eq!(argv("m", "0 a\n", 2).unwrap_err(), "--multi-prog: m has no line for task 1");
        assert_eq!(
            argv("m", "x-1 a\n", 0).unwrap_err(),
            "--multi-prog: m line 1: 'x-1' is not a list of task ids (0,2-3) or *"
        );
        assert_eq!(argv("m", "0 a\n\n0 b\n", 0).unwrap_err(), "--multi-prog: m line 3: task 0 has two lines");
        assert_eq!(argv("m", "3\n", 0).unwrap_err(), "--multi-prog: m line 1: '3' has no program");
        assert_eq!(argv("m", "0 echo 'a\n", 0).unwrap_err(), "--multi-prog: m line 1: a quote is not closed");
    }
}
