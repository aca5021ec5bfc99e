//! The one rule by which scontrol and sacctmgr read a typed keyword
//! (a subcommand, an entity, the key of a `key=value`): any case, and any
//! prefix that names one keyword (`scontrol upd JobId=12 timel=5`,
//! `sacctmgr sh qos`). A word that is a keyword whole wins over longer ones
//! it begins (`Name` is not ambiguous beside `NameList`); a prefix of several
//! is refused, naming them.

/// A prefix that begins more than one keyword.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("'{word}' is ambiguous (it could be {})", candidates.join(", "))]
pub struct Ambiguous {
    /// The word as typed.
    pub word: String,
    /// The keywords it begins, in the table's order.
    pub candidates: Vec<&'static str>,
}

/// The keyword `word` names in `table`: `Ok(None)` when it begins none.
/// Several spellings of one keyword (aliases) count once: give them as
/// `(spelling, keyword)` pairs through [`resolve_alias`].
pub fn resolve(word: &str, table: &[&'static str]) -> Result<Option<&'static str>, Ambiguous> {
    resolve_alias(word, table.iter().map(|k| (*k, *k)))
}

/// [`resolve`] over `(spelling, keyword)` pairs: a prefix of several spellings
/// of the same keyword is that keyword.
pub fn resolve_alias(
    word: &str,
    table: impl IntoIterator<Item = (&'static str, &'static str)>,
) -> Result<Option<&'static str>, Ambiguous> {
    let w = word.trim();
    if w.is_empty() {
        return Ok(None);
    }
    let mut hits: Vec<&'static str> = vec![];
    for (spelling, keyword) in table {
        if spelling.eq_ignore_ascii_case(w) {
            return Ok(Some(keyword));
        }
        let begins = spelling.len() > w.len()
            && spelling.is_char_boundary(w.len())
            && spelling[..w.len()].eq_ignore_ascii_case(w);
        if begins && !hits.contains(&keyword) {
            hits.push(keyword);
        }
    }
    match hits.len() {
        0 => Ok(None),
        1 => Ok(Some(hits[0])),
        _ => Err(Ambiguous { word: w.to_string(), candidates: hits }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: &[&str] = &["show", "update", "reconfigure", "release", "requeue", "Name", "NameList"];

    #[test]
    fn a_unique_prefix_any_case_names_its_keyword() {
        assert_eq!(resolve("SH", T), Ok(Some("show")));
        assert_eq!(resolve("upd", T), Ok(Some("update")));
        assert_eq!(resolve("reco", T), Ok(Some("reconfigure")));
        assert_eq!(resolve("update", T), Ok(Some("update")));
        assert_eq!(resolve("updates", T), Ok(None));
        assert_eq!(resolve("", T), Ok(None));
        assert_eq!(resolve("é", T), Ok(None));
    }

    #[test]
    fn a_whole_keyword_wins_and_an_ambiguous_prefix_names_the_candidates() {
        assert_eq!(resolve("name", T), Ok(Some("Name")));
        assert_eq!(resolve("namel", T), Ok(Some("NameList")));
        let e = resolve("re", T).unwrap_err();
        assert_eq!(e.candidates, ["reconfigure", "release", "requeue"]);
        assert_eq!(e.to_string(), "'re' is ambiguous (it could be reconfigure, release, requeue)");
    }

    #[test]
    fn aliases_of_one_keyword_are_not_ambiguous() {
        let t = [("maxwall", "maxwall"), ("maxwallduration", "maxwall"), ("maxjobs", "maxjobs")];
        assert_eq!(resolve_alias("maxw", t), Ok(Some("maxwall")));
        assert!(resolve_alias("max", t).is_err());
    }
}
