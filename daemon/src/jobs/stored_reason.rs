//! A job record's reason as the store holds it: Slurm's spelling of the
//! code, "" for none. Rows written when the reason was free text read back
//! the code that text meant, so an upgraded store loads unchanged.

use serde::{Deserialize, Deserializer, Serializer};
use spur_vocab::reason::ReasonCode;

pub fn serialize<S: Serializer>(r: &Option<ReasonCode>, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(r.map_or("", ReasonCode::as_str))
}

pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<ReasonCode>, D::Error> {
    Ok(read(&String::deserialize(d)?))
}

/// The code a stored reason names, the old free-text forms included.
pub fn read(text: &str) -> Option<ReasonCode> {
    match text {
        "" | "None" => None,
        t if t.starts_with("killed by signal ") => Some(ReasonCode::RaisedSignal),
        t if t.starts_with("launch failed: ") => Some(ReasonCode::JobLaunchFailure),
        t => Some(ReasonCode::parse(t).unwrap_or(ReasonCode::Prolog)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip_and_old_texts_read_as_their_codes() {
        for c in ReasonCode::ALL {
            assert_eq!(read(c.as_str()), Some(*c));
        }
        let old = [
            ("", None),
            ("None", None),
            ("killed by signal 9", Some(ReasonCode::RaisedSignal)),
            ("launch failed: no such file", Some(ReasonCode::JobLaunchFailure)),
            ("qpu offline", Some(ReasonCode::Prolog)),
        ];
        for (text, want) in old {
            assert_eq!(read(text), want, "{text}");
        }
    }
}
