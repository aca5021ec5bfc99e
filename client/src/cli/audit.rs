//! `spur audit tail [filters]`: txn rows as they commit, one per line.

use super::args::{Flags, Parsable};
use super::columns::{self, Column};
use super::getopt::{Mode, Opt, Spec, check, switch, value};
use super::output::{complain, emit};
use crate::conn::{self, Identity};
use spur_proto::v1 as pb;

const USAGE: &str = "\
usage: spur audit tail [Key=value ...] [-p|-P] [--after ID] [--format COLS] [--controller URL]
Print txn audit rows as they commit, one per line.
  Key=value          sacctmgr show txn filters: Actor=, Action=, Entity=, Name=, Outcome=, Peer=, Start=, End=
  -P, --parsable2    '|' delimited, no trailing '|'      -p, --parsable   '|' delimited, trailing '|'
  --after ID         replay the rows after this id first (resume without a gap)
  --format COLS      columns, as sacctmgr's format= (default Time,Action,Actor,Where,Outcome,Peer,Info)";

#[derive(Debug)]
struct TailArgs {
    filters: Vec<String>,
    parsable2: bool,
    parsable: bool,
    after: Option<i64>,
    format: String,
    controller: Option<String>,
    help: bool,
}

impl Default for TailArgs {
    fn default() -> Self {
        TailArgs {
            filters: vec![],
            parsable2: false,
            parsable: false,
            after: None,
            format: "Time,Action,Actor,Where,Outcome,Peer,Info".into(),
            controller: None,
            help: false,
        }
    }
}

static FLAGS: Spec<TailArgs> = Spec { opts: OPTS, mode: Mode::Anywhere, noun: "flag" };
const OPTS: &[Opt<TailArgs>] = &[
    switch("P/parsable2", |a| a.parsable2 = true),
    switch("p/parsable", |a| a.parsable = true),
    check("-/after", |a, v| {
        let id = v.trim().parse().map_err(|_| format!("--after: '{v}' is not a txn id"))?;
        a.after = Some(id);
        Ok(())
    }),
    value("-/format", |a, v| a.format = v),
    value("-/controller", |a, v| a.controller = Some(v)),
    switch("h/help", |a| a.help = true),
];

/// `tail`'s arguments: flags anywhere, the words are the filters.
fn parse(rest: &[String]) -> Result<TailArgs, String> {
    let mut args = TailArgs::default();
    args.filters = FLAGS.parse(rest, &mut args)?;
    Ok(args)
}

pub async fn main(argv: &[String]) -> i32 {
    let args = match argv.split_first() {
        Some((sub, rest)) if sub == "tail" => match parse(rest) {
            Ok(a) => a,
            Err(e) => {
                complain(&format!("spur audit tail: error: {e}"));
                return 1;
            }
        },
        _ => {
            complain("spur audit: error: usage: spur audit tail [Key=value ...] [-P] [--after ID]");
            return 1;
        }
    };
    if args.help {
        return emit("spur audit tail", &format!("{USAGE}\n"));
    }
    match tail(args).await {
        Ok(code) => code,
        Err(e) => {
            complain(&format!("spur audit tail: error: {e}"));
            1
        }
    }
}

/// Prints rows until the stream ends (an error) or stdout closes (its exit code).
async fn tail(args: TailArgs) -> Result<i32, String> {
    let mut filter = vec![];
    for f in &args.filters {
        let (k, v) = f
            .split_once('=')
            .ok_or_else(|| format!("unrecognised argument '{f}' (filters are Key=value)"))?;
        filter.push(pb::KeyValue { key: k.into(), value: v.into() });
    }
    let format: Vec<String> = args.format.split(',').map(str::to_string).collect();
    let cols: Vec<&Column<pb::TxnRow>> =
        columns::select(columns::TXN, columns::TXN_DEFAULT, Some(&format), "txn")?;
    let flags = Flags {
        parsable: match (args.parsable2, args.parsable) {
            (true, _) => Parsable::NoTrailing,
            (false, true) => Parsable::Trailing,
            _ => Parsable::No,
        },
        ..Flags::default()
    };
    let mut c = conn::connect_flag(args.controller.as_deref(), Identity::local()).await?;
    let req = pb::TailTxnRequest { filter, after_id: args.after };
    let mut stream = c.audit.tail_txn(req).await.map_err(|s| s.message().to_string())?.into_inner();
    while let Some(ev) = stream.message().await.map_err(|s| s.message().to_string())? {
        match ev.event {
            Some(pb::tail_txn_event::Event::Row(r)) => {
                let cells: Vec<String> = cols.iter().map(|c| (c.get)(&r)).collect();
                let code = emit("spur audit tail", &format!("{}\n", line(&cells, flags.parsable)));
                if code != 0 {
                    return Ok(code);
                }
            }
            Some(pb::tail_txn_event::Event::Lagged(note)) => complain(&format!("spur audit tail: {note}")),
            None => {}
        }
    }
    Err("the controller ended the stream".into())
}

fn line(cells: &[String], p: Parsable) -> String {
    match p {
        Parsable::No => cells.join("  "),
        Parsable::NoTrailing => cells.join("|"),
        Parsable::Trailing => cells.join("|") + "|",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Result<TailArgs, String> {
        parse(&s.split_whitespace().map(String::from).collect::<Vec<_>>())
    }

    #[test]
    fn tail_takes_filters_among_flags() {
        let a = p("Entity=qos -P --format Action,Actor --after=7 Outcome=ok").unwrap();
        assert_eq!(a.filters, ["Entity=qos", "Outcome=ok"]);
        assert!(a.parsable2 && !a.parsable);
        assert_eq!((a.format.as_str(), a.after), ("Action,Actor", Some(7)));
        let a = p("-pP --controller http://h:1 --after 3").unwrap();
        assert!(a.parsable && a.parsable2);
        assert_eq!((a.controller.as_deref(), a.after), (Some("http://h:1"), Some(3)));
        assert_eq!(p("").unwrap().format, "Time,Action,Actor,Where,Outcome,Peer,Info");
        assert!(p("--help").unwrap().help);
    }

    #[test]
    fn tail_names_bad_flags() {
        assert_eq!(p("--after x").unwrap_err(), "--after: 'x' is not a txn id");
        assert_eq!(p("--after").unwrap_err(), "'--after' needs a value");
        assert_eq!(p("--bogus").unwrap_err(), "unrecognised flag '--bogus'");
        assert_eq!(p("-x").unwrap_err(), "unrecognised flag '-x'");
    }
}
