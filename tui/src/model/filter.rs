//! Row filters typed after `/`: a regex, smart-case (case-insensitive
//! unless the pattern has an upper-case letter), inverted by a leading `!`.

use regex::{Regex, RegexBuilder};

#[derive(Debug, Clone)]
pub struct Filter {
    /// What the operator typed, shown in the breadcrumb and re-edited on `/`.
    pub text: String,
    regex: Regex,
    invert: bool,
}

impl Filter {
    /// `Ok(None)` for an empty pattern (no filter); `Err` names the regex problem.
    pub fn parse(text: &str) -> Result<Option<Filter>, String> {
        let (invert, pattern) = match text.strip_prefix('!') {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        if pattern.is_empty() {
            return Ok(None);
        }
        let regex = RegexBuilder::new(pattern)
            .case_insensitive(!pattern.chars().any(char::is_uppercase))
            // Bounded so a pathological pattern cannot eat the console's memory.
            .size_limit(1 << 20)
            .build()
            .map_err(|e| match e {
                regex::Error::Syntax(s) => s.lines().last().unwrap_or("invalid regex").trim().to_string(),
                other => other.to_string(),
            })?;
        Ok(Some(Filter { text: text.to_string(), regex, invert }))
    }

    pub fn matches(&self, haystack: &str) -> bool {
        self.regex.is_match(haystack) != self.invert
    }

    pub fn inverted(&self) -> bool {
        self.invert
    }
}

impl PartialEq for Filter {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text
    }
}
