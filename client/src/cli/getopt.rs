//! The one flag parser of every `spur` command: GNU getopt_long's rules
//! (bundled short flags `-Nh`, attached values `-pdebug`, `--opt=value` and
//! `--opt value`, unique long prefixes `--part`, `--` ending the flags), with
//! each command's flags declared as a table, one line per flag:
//!
//! ```text
//! const OPTS: &[Opt<Args>] = &[
//!     switch("h/noheader", |a| a.noheader = true),         // -h, --noheader
//!     value("p/partition", |a, v| a.partitions = list(&v)), // -p P, -pP, --partition=P
//!     check("-/jobs", |a, v| ...),                          // --jobs only; may refuse the value
//! ];
//! ```
//!
//! The table is read in three [`Mode`]s: flags anywhere (most commands), flags
//! until the first word (sbatch, so a script's own arguments stay its own),
//! and flags among `Key=value` words (sacctmgr). Errors name the flag.
//!
//! A flag Slurm knows but Spur has no mechanism for is declared with
//! [`Opt::noted`]: it is accepted (and may still store its value), and the
//! command prints one warning naming why it has no effect ([`warnings`]).
//! Tables shared by several commands are joined with [`join`].

/// What a flag does when given: `Switch` takes no value; `Value` takes one;
/// `Check` takes one and may refuse it with a message; `Maybe` takes one
/// only when attached (getopt's optional argument: `--opt=v`, `-ov`).
pub enum Set<T: 'static> {
    Switch(fn(&mut T)),
    Value(fn(&mut T, String)),
    Check(fn(&mut T, String) -> Result<(), String>),
    Maybe(fn(&mut T, Option<String>) -> Result<(), String>),
}

/// One flag: `names` is `"J/job-name"` (`-J`, `--job-name`) or `"-/json"`
/// (long only); `note` is why it has no effect on Spur, for a flag that is
/// only accepted.
pub struct Opt<T: 'static> {
    pub names: &'static str,
    pub set: Set<T>,
    pub note: Option<&'static str>,
}

// Tables are copied when joined; a derive would ask for `T: Copy`.
impl<T> Clone for Set<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Set<T> {}
impl<T> Clone for Opt<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Opt<T> {}

/// A flag without a value.
pub const fn switch<T>(names: &'static str, f: fn(&mut T)) -> Opt<T> {
    Opt { names, set: Set::Switch(f), note: None }
}

/// A flag with a value.
pub const fn value<T>(names: &'static str, f: fn(&mut T, String)) -> Opt<T> {
    Opt { names, set: Set::Value(f), note: None }
}

/// A flag with a value that is checked as it is applied.
pub const fn check<T>(names: &'static str, f: fn(&mut T, String) -> Result<(), String>) -> Opt<T> {
    Opt { names, set: Set::Check(f), note: None }
}

/// A flag whose value is optional and must be attached (`--exclusive[=user]`).
pub const fn maybe<T>(names: &'static str, f: fn(&mut T, Option<String>) -> Result<(), String>) -> Opt<T> {
    Opt { names, set: Set::Maybe(f), note: None }
}

/// A flag accepted with its value (any) and a warning: nothing is kept.
pub const fn ignored<T>(names: &'static str, why: &'static str) -> Opt<T> {
    value(names, |_, _| {}).noted(why)
}

/// A flag without a value accepted with a warning.
pub const fn ignored_switch<T>(names: &'static str, why: &'static str) -> Opt<T> {
    switch(names, |_| {}).noted(why)
}

/// `a` then `b` as one table (`N` is their lengths' sum), so commands of
/// one family declare their shared flags once.
pub const fn join<T, const N: usize>(a: &[Opt<T>], b: &[Opt<T>]) -> [Opt<T>; N] {
    assert!(a.len() + b.len() == N, "join: N must be the sum of the tables' lengths");
    let mut out = [if a.is_empty() { b[0] } else { a[0] }; N];
    let mut i = 0;
    while i < N {
        out[i] = if i < a.len() { a[i] } else { b[i - a.len()] };
        i += 1;
    }
    // A name in both tables would leave the second unreachable: refused when the tables are built.
    let mut i = 0;
    while i < N {
        let mut j = i + 1;
        while j < N {
            assert!(
                !clash(out[i].names.as_bytes(), out[j].names.as_bytes()),
                "join: a flag is declared twice"
            );
            j += 1;
        }
        i += 1;
    }
    out
}

/// Whether two `"s/long"` names share their long name or their short letter (`-` is none).
const fn clash(a: &[u8], b: &[u8]) -> bool {
    if a.len() < 2 || b.len() < 2 {
        return false;
    }
    if a[0] == b[0] && a[0] != b'-' {
        return true;
    }
    if a.len() != b.len() {
        return false;
    }
    let mut i = 2;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// The warning lines for the noted flags given, once each, in order:
/// `sbatch: warning: --bb has no effect on Spur: burst buffers are not part of Spur`.
pub fn warnings<'a, T: 'static>(cmd: &str, given: impl IntoIterator<Item = &'a Opt<T>>) -> Vec<String> {
    let mut out: Vec<String> = vec![];
    for o in given {
        if let Some(why) = o.note {
            let line = format!("{cmd}: warning: --{} has no effect on Spur: {why}", o.long());
            if !out.contains(&line) {
                out.push(line);
            }
        }
    }
    out
}

/// What parsing a command line did, without running the command: the long
/// names applied, in order, and the warnings of the noted ones (for the
/// tests that check every option Slurm's man pages list).
#[derive(Debug, Default, PartialEq)]
pub struct Probe {
    pub applied: Vec<&'static str>,
    pub warnings: Vec<String>,
}

/// Parses `args` with `spec` onto a fresh `T`, applying every flag.
pub fn probe<T: Default>(spec: &Spec<T>, cmd: &str, args: &[String]) -> Result<Probe, String> {
    let mut into = T::default();
    let mut given = vec![];
    for item in spec.items(args).collect::<Result<Vec<_>, _>>()? {
        if let Arg::Flag(o, v) = item {
            o.apply(&mut into, v)?;
            given.push(o);
        }
    }
    Ok(Probe { applied: given.iter().map(|o| o.long()).collect(), warnings: warnings(cmd, given) })
}

impl<T> Opt<T> {
    /// The flag is accepted with one warning saying `why` it has no effect.
    pub const fn noted(self, why: &'static str) -> Self {
        Opt { note: Some(why), ..self }
    }

    pub fn short(&self) -> Option<char> {
        self.names.split_once('/').and_then(|(s, _)| s.chars().next()).filter(|c| *c != '-')
    }

    pub fn long(&self) -> &'static str {
        self.names.split_once('/').map_or(self.names, |(_, l)| l)
    }

    fn takes_value(&self) -> bool {
        matches!(self.set, Set::Value(_) | Set::Check(_))
    }

    /// Applies the flag to the command's arguments.
    pub fn apply(&self, into: &mut T, v: Option<String>) -> Result<(), String> {
        match self.set {
            Set::Switch(f) => f(into),
            Set::Value(f) => f(into, v.unwrap_or_default()),
            Set::Check(f) => f(into, v.unwrap_or_default())?,
            Set::Maybe(f) => f(into, v)?,
        }
        Ok(())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// getopt_long with permutation: flags anywhere, words kept in order.
    Anywhere,
    /// getopt's `+`: flags until the first word or `--`; the rest are words.
    Leading,
    /// sacctmgr's: flags anywhere among `Key=value` words, long names spelled
    /// out; a dashed word that is not a flag is left as a word for the
    /// command to name, but a bundle with an unknown letter is refused.
    AmongPairs,
}

/// A command's flags: the table, how it is read, and the word for a flag in
/// messages (`flag`, or `option` as sbatch says).
pub struct Spec<T: 'static> {
    pub opts: &'static [Opt<T>],
    pub mode: Mode,
    pub noun: &'static str,
}

/// One parsed item, in command-line order.
pub enum Arg<T: 'static> {
    Flag(&'static Opt<T>, Option<String>),
    Word(String),
}

impl<T> Spec<T> {
    /// Parses `args` and applies each flag to `into`, in order; returns the words.
    /// Every flag is parsed before any is applied, so a malformed flag is
    /// reported before a bad value.
    pub fn parse(&self, args: &[String], into: &mut T) -> Result<Vec<String>, String> {
        let items = self.items(args).collect::<Result<Vec<_>, _>>()?;
        let mut words = vec![];
        for item in items {
            match item {
                Arg::Flag(o, v) => o.apply(into, v)?,
                Arg::Word(w) => words.push(w),
            }
        }
        Ok(words)
    }

    /// [`Spec::parse`] for a command that takes no words: the first one, in
    /// order among the flags, is refused, naming `cmd`'s help.
    pub fn parse_flags(&self, args: &[String], into: &mut T, cmd: &str) -> Result<(), String> {
        for item in self.items(args).collect::<Result<Vec<_>, _>>()? {
            match item {
                Arg::Flag(o, v) => o.apply(into, v)?,
                Arg::Word(w) => return Err(format!("unrecognised argument '{w}' (see {cmd} --help)")),
            }
        }
        Ok(())
    }

    /// The items one by one; after an error the next token is read, so a
    /// caller may skip errors (sacctmgr looking only for `--help`).
    pub fn items<'a>(&'a self, args: &'a [String]) -> Items<'a, T> {
        Items { spec: self, args: args.iter(), bundle: None, words_only: false }
    }

    /// `option ` before messages that start with the flag, as sbatch words them.
    fn lead(&self) -> &'static str {
        if self.noun == "option" { "option " } else { "" }
    }

    /// An exact long name, else (outside sacctmgr) a unique prefix of one.
    fn long(&self, name: &str) -> Result<Option<&'static Opt<T>>, String> {
        if let Some(o) = self.opts.iter().find(|o| o.long() == name) {
            return Ok(Some(o));
        }
        if self.mode == Mode::AmongPairs {
            return Ok(None);
        }
        let hits: Vec<&Opt<T>> =
            self.opts.iter().filter(|o| !name.is_empty() && o.long().starts_with(name)).collect();
        // Two short spellings of one long name (`-h`, `-n` for `--noheader`) are one flag.
        match hits.as_slice() {
            [] => Err(format!("unrecognised {} '--{name}'", self.noun)),
            [o, rest @ ..] if rest.iter().all(|r| r.long() == o.long()) => Ok(Some(o)),
            _ => Err(format!("ambiguous {} '--{name}'", self.noun)),
        }
    }
}

/// The parser proper: an iterator over a command line's items.
pub struct Items<'a, T: 'static> {
    spec: &'a Spec<T>,
    args: std::slice::Iter<'a, String>,
    /// A bundle of short flags being read (`-Nh`), and where its next letter is.
    bundle: Option<(&'a str, usize)>,
    words_only: bool,
}

impl<'a, T> Items<'a, T> {
    fn value(&mut self, flag: String) -> Result<String, String> {
        self.args.next().cloned().ok_or_else(|| format!("{}'{flag}' needs a value", self.spec.lead()))
    }

    fn long(&mut self, tok: &'a str, body: &'a str) -> Option<Result<Arg<T>, String>> {
        let (name, inline) = match body.split_once('=') {
            Some((n, v)) => (n, Some(v.to_string())),
            None => (body, None),
        };
        let o = match self.spec.long(name) {
            Ok(Some(o)) => o,
            Ok(None) => return Some(Ok(Arg::Word(tok.to_string()))),
            Err(e) => return Some(Err(e)),
        };
        let v = match (o.takes_value(), inline) {
            (_, Some(v)) if matches!(o.set, Set::Maybe(_)) => Some(v),
            (true, Some(v)) => Some(v),
            (true, None) => match self.value(format!("--{}", o.long())) {
                Ok(v) => Some(v),
                Err(e) => return Some(Err(e)),
            },
            (false, Some(_)) => {
                return Some(Err(format!("{}'--{}' takes no value", self.spec.lead(), o.long())));
            }
            (false, None) => None,
        };
        Some(Ok(Arg::Flag(o, v)))
    }

    /// The next letter of the bundle being read.
    fn short(&mut self, tok: &'a str, at: usize) -> Result<Arg<T>, String> {
        self.bundle = None;
        let Some(c) = tok[at..].chars().next() else { return Err(format!("empty flag '{tok}'")) };
        let Some(o) = self.spec.opts.iter().find(|o| o.short() == Some(c)) else {
            return Err(if tok.len() > 2 {
                format!("unrecognised {} '-{c}' in '{tok}'", self.spec.noun)
            } else {
                format!("unrecognised {} '{tok}'", self.spec.noun)
            });
        };
        let next = at + c.len_utf8();
        if matches!(o.set, Set::Maybe(_)) {
            // An optional value is the rest of the word, if any (`-K0`).
            return Ok(Arg::Flag(o, (next < tok.len()).then(|| tok[next..].to_string())));
        }
        if !o.takes_value() {
            if next < tok.len() {
                self.bundle = Some((tok, next));
            }
            return Ok(Arg::Flag(o, None));
        }
        // A flag with a value takes the rest of the word (`-pdebug`), else the next word.
        let v = if next < tok.len() { tok[next..].to_string() } else { self.value(format!("-{c}"))? };
        Ok(Arg::Flag(o, Some(v)))
    }
}

impl<'a, T> Iterator for Items<'a, T> {
    type Item = Result<Arg<T>, String>;

    fn next(&mut self) -> Option<Self::Item> {
        if let Some((tok, at)) = self.bundle {
            return Some(self.short(tok, at));
        }
        let tok: &'a str = self.args.next()?;
        let mode = self.spec.mode;
        if self.words_only {
            return Some(Ok(Arg::Word(tok.to_string())));
        }
        if tok == "--" && mode != Mode::AmongPairs {
            self.words_only = true;
            return self.next();
        }
        if let Some(body) = tok.strip_prefix("--").filter(|_| tok != "--") {
            return self.long(tok, body);
        }
        if tok.len() > 1 && tok.starts_with('-') && tok != "--" {
            let known = |c: char| self.spec.opts.iter().any(|o| o.short() == Some(c));
            // sacctmgr leaves `-x` to be named as an argument; only bundles are its flags' business.
            if mode == Mode::AmongPairs && tok.chars().count() == 2 && !tok[1..].starts_with(known) {
                return Some(Ok(Arg::Word(tok.to_string())));
            }
            return Some(self.short(tok, 1));
        }
        if mode == Mode::Leading {
            self.words_only = true;
        }
        Some(Ok(Arg::Word(tok.to_string())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Default, PartialEq)]
    struct A {
        seen: Vec<String>,
    }

    fn note(a: &mut A, s: &str) {
        a.seen.push(s.to_string());
    }

    fn user(a: &mut A, v: String) -> Result<(), String> {
        if v == "-x" {
            return Err("--user: no".into());
        }
        note(a, &v);
        Ok(())
    }

    const OPTS: &[Opt<A>] = &[
        switch("h/noheader", |a| note(a, "noheader")),
        switch("N/Node", |a| note(a, "Node")),
        value("p/partition", |a, v| note(a, &format!("partition={v}"))),
        switch("-/json", |a| note(a, "json")),
        value("-/nodes", |a, v| note(a, &format!("nodes={v}"))),
        switch("-/noconvert", |a| note(a, "noconvert")),
        switch("n/noheader", |a| note(a, "noheader")),
        check("u/user", user),
        maybe("K/keep", |a, v| {
            note(a, &format!("keep={v:?}"));
            Ok(())
        }),
        ignored("-/bb", "burst buffers are not part of Spur"),
    ];
    static ANYWHERE: Spec<A> = Spec { opts: OPTS, mode: Mode::Anywhere, noun: "flag" };
    static LEADING: Spec<A> = Spec { opts: OPTS, mode: Mode::Leading, noun: "option" };
    static AMONG: Spec<A> = Spec { opts: OPTS, mode: Mode::AmongPairs, noun: "flag" };

    fn v(s: &[&str]) -> Vec<String> {
        s.iter().map(|s| s.to_string()).collect()
    }

    fn run(spec: &Spec<A>, args: &[&str]) -> Result<(Vec<String>, Vec<String>), String> {
        let mut a = A::default();
        let words = spec.parse(&v(args), &mut a)?;
        Ok((a.seen, words))
    }

    #[test]
    fn bundles_attaches_and_permutes() {
        let (seen, words) =
            run(&ANYWHERE, &["-Nh", "x", "-pdebug", "--partition=gpu", "--json", "-p", "a,b"]).unwrap();
        assert_eq!(seen, ["Node", "noheader", "partition=debug", "partition=gpu", "json", "partition=a,b"]);
        assert_eq!(words, ["x"]);
        assert_eq!(run(&ANYWHERE, &["--part", "p"]).unwrap().0, ["partition=p"]);
        assert_eq!(run(&ANYWHERE, &["--", "-h"]).unwrap(), (vec![], v(&["-h"])));
        // A value that looks like a flag is still the value (`-u -1`).
        assert_eq!(run(&ANYWHERE, &["-u", "-1", "--nodes", "-x"]).unwrap().0, ["-1", "nodes=-x"]);
        // Two short spellings of one long name make its prefix unambiguous.
        assert_eq!(run(&ANYWHERE, &["--nohead"]).unwrap().0, ["noheader"]);
    }

    #[test]
    fn names_bad_flags() {
        let err = |args: &[&str]| run(&ANYWHERE, args).unwrap_err();
        assert_eq!(err(&["--bogus"]), "unrecognised flag '--bogus'");
        assert_eq!(err(&["-x"]), "unrecognised flag '-x'");
        assert_eq!(err(&["-hx"]), "unrecognised flag '-x' in '-hx'");
        assert_eq!(err(&["--no"]), "ambiguous flag '--no'");
        assert_eq!(err(&["-p"]), "'-p' needs a value");
        assert_eq!(err(&["--nodes"]), "'--nodes' needs a value");
        assert_eq!(err(&["--json=1"]), "'--json' takes no value");
        // A malformed flag anywhere is reported before a refused value.
        assert_eq!(err(&["-u", "-x", "--bogus"]), "unrecognised flag '--bogus'");
        assert_eq!(err(&["-u", "-x"]), "--user: no");
    }

    #[test]
    fn leading_stops_at_the_first_word() {
        let (seen, words) = run(&LEADING, &["-h", "script.sh", "-N", "--json"]).unwrap();
        assert_eq!((seen, words), (v(&["noheader"]), v(&["script.sh", "-N", "--json"])));
        assert_eq!(run(&LEADING, &["--", "-h"]).unwrap().1, ["-h"]);
        let err = |args: &[&str]| run(&LEADING, args).unwrap_err();
        assert_eq!(err(&["--bogus", "x.sh"]), "unrecognised option '--bogus'");
        assert_eq!(err(&["--json=1"]), "option '--json' takes no value");
        assert_eq!(err(&["--nodes"]), "option '--nodes' needs a value");
    }

    #[test]
    fn among_pairs_leaves_unknown_words_to_the_command() {
        let (seen, words) = run(&AMONG, &["show", "-x", "--bogus", "--nohead", "-nN", "a=b", "--"]).unwrap();
        assert_eq!(seen, ["noheader", "Node"]);
        assert_eq!(words, ["show", "-x", "--bogus", "--nohead", "a=b", "--"]);
        assert_eq!(run(&AMONG, &["-nx"]).unwrap_err(), "unrecognised flag '-x' in '-nx'");
        assert_eq!(run(&AMONG, &["--nodes=n1"]).unwrap().0, ["nodes=n1"]);
    }

    #[test]
    fn optional_values_are_attached_or_absent() {
        let (seen, words) = run(&LEADING, &["-K", "-K0", "--keep", "--keep=1", "x"]).unwrap();
        assert_eq!(seen, ["keep=None", "keep=Some(\"0\")", "keep=None", "keep=Some(\"1\")"]);
        assert_eq!(words, ["x"], "a bare optional flag never takes the next word");
    }

    #[test]
    fn noted_flags_are_accepted_and_warned_once() {
        let args = v(&["--bb=x", "-h", "--bb", "y"]);
        let items: Vec<Arg<A>> = ANYWHERE.items(&args).collect::<Result<_, _>>().unwrap();
        let given = items.iter().filter_map(|i| if let Arg::Flag(o, _) = i { Some(*o) } else { None });
        assert_eq!(
            warnings("sbatch", given),
            ["sbatch: warning: --bb has no effect on Spur: burst buffers are not part of Spur"]
        );
        const A1: &[Opt<A>] = &[switch("h/noheader", |_| {})];
        const B1: &[Opt<A>] = &[ignored_switch("-/x11", "no"), switch("-/json", |_| {})];
        const J: [Opt<A>; 3] = join(A1, B1);
        assert!(clash(b"h/noheader", b"-/noheader") && clash(b"h/a", b"h/b") && !clash(b"-/a", b"-/b"));
        let names: Vec<&str> = J.iter().map(Opt::long).collect();
        assert_eq!(names, ["noheader", "x11", "json"]);
        assert_eq!(J[1].note, Some("no"));
    }

    #[test]
    fn items_go_on_after_an_error() {
        let got: Vec<bool> = ANYWHERE.items(&v(&["--bogus", "-h"])).map(|r| r.is_ok()).collect();
        assert_eq!(got, [false, true]);
    }
}
