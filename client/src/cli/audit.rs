//! `spur audit tail [filters]`: txn rows as they commit, one per line.

use super::args::{Flags, Parsable};
use super::columns::{self, Column};
use super::output::{clap_exit, complain, emit};
use crate::conn::{self, Identity};
use clap::Parser;
use spur_proto::v1 as pb;

#[derive(Parser, Debug)]
#[command(name = "spur audit tail", about = "Print txn audit rows as they commit")]
struct TailArgs {
    /// sacctmgr show txn filters: Actor=, Action=, Entity=, Name=, Outcome=, Peer=, Start=, End=
    filters: Vec<String>,
    /// `|` delimited, no trailing `|`.
    #[arg(short = 'P', long = "parsable2")]
    parsable2: bool,
    /// `|` delimited, trailing `|`.
    #[arg(short = 'p', long = "parsable")]
    parsable: bool,
    /// Replay the rows after this id first (resume without a gap).
    #[arg(long)]
    after: Option<i64>,
    /// Columns, as sacctmgr's format=.
    #[arg(long, default_value = "Time,Action,Actor,Where,Outcome,Peer,Info")]
    format: String,
    #[arg(long)]
    controller: Option<String>,
}

pub async fn main(argv: &[String]) -> i32 {
    let args = match argv.split_first() {
        Some((sub, rest)) if sub == "tail" => {
            match TailArgs::try_parse_from(
                std::iter::once("spur audit tail".to_string()).chain(rest.iter().cloned()),
            ) {
                Ok(a) => a,
                Err(e) => return clap_exit("spur audit tail", &e),
            }
        }
        _ => {
            complain("spur audit: error: usage: spur audit tail [Key=value ...] [-P] [--after ID]");
            return 1;
        }
    };
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
