//! The reference versions whose semantics the engine reproduces, side by side.
//!
//! The reference runtime (`transformers.utils.chat_parsing`) changes between releases. The
//! engine keeps one parser and switches at the few places where the versions differ; every
//! such place asks a predicate here, so that what changed between two versions is listed in
//! one file:
//!
//! | | 5.24 | 5.25 |
//! |---|---|---|
//! | token ids | decoded to text, then parsed as text | control-token spellings made of ordinary tokens are defused ([`Reference::defuses_control_tokens`]) |
//! | xml-inline `value_parser_by` | ignored | picks the value parser per tag ([`Reference::value_parser_by`]) |
//! | tool-argument coercion under `json` / `python-call-list` | every string argument is cast | parameters whose schema allows `string` are left alone ([`Reference::typed_coercion`]) |
//!
//! A [`Template`](crate::Template) runs under one version ([`Template::with_reference`](crate::Template::with_reference));
//! the newest is the default.

use std::fmt;
use std::str::FromStr;

/// A version of the reference runtime.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Reference {
    /// transformers 5.24.0.
    V5_24,
    /// transformers 5.25.0 (the newest supported: the default).
    #[default]
    V5_25,
}

impl Reference {
    /// Every supported version, oldest first.
    pub const ALL: [Reference; 2] = [Reference::V5_24, Reference::V5_25];

    /// The newest supported version, the default.
    pub const NEWEST: Reference = Reference::V5_25;

    /// The short name used on the command line and in the config file: `5.24`, `5.25`.
    pub fn name(self) -> &'static str {
        match self {
            Reference::V5_24 => "5.24",
            Reference::V5_25 => "5.25",
        }
    }

    /// The full release this version's semantics were recorded from: `5.24.0`, `5.25.0`.
    pub fn release(self) -> &'static str {
        match self {
            Reference::V5_24 => "5.24.0",
            Reference::V5_25 => "5.25.0",
        }
    }

    /// Parsing token ids defuses control-token spellings made of ordinary tokens (5.25's
    /// `TokenIdDecoder`); before, ids were decoded to text and parsed as text.
    pub fn defuses_control_tokens(self) -> bool {
        self >= Reference::V5_25
    }

    /// xml-inline reads `value_parser_by`, and tool-argument coercion skips a field that sets
    /// it.
    pub fn value_parser_by(self) -> bool {
        self >= Reference::V5_25
    }

    /// Tool-argument coercion leaves parameters whose schema allows `string` untouched when the
    /// field's parser is `json` or `python-call-list`.
    pub fn typed_coercion(self) -> bool {
        self >= Reference::V5_25
    }
}

impl fmt::Display for Reference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A version name that is not a supported reference version.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownReference(pub String);

impl fmt::Display for UnknownReference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = Reference::ALL.iter().map(|r| r.name()).collect();
        write!(
            f,
            "unknown reference version {:?}: rtbench supports {}",
            self.0,
            names.join(" and ")
        )
    }
}

impl std::error::Error for UnknownReference {}

impl FromStr for Reference {
    type Err = UnknownReference;

    /// `5.24`, `5.24.0`, `5.25`, `5.25.0` (surrounding spaces ignored).
    ///
    /// ```
    /// use rtbench_engine::Reference;
    ///
    /// assert_eq!("5.24".parse::<Reference>(), Ok(Reference::V5_24));
    /// assert_eq!("5.25.0".parse::<Reference>(), Ok(Reference::V5_25));
    /// assert!("5.23".parse::<Reference>().is_err());
    /// ```
    fn from_str(s: &str) -> Result<Reference, UnknownReference> {
        let s = s.trim();
        Reference::ALL
            .into_iter()
            .find(|r| s == r.name() || s == r.release())
            .ok_or_else(|| UnknownReference(s.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_newest_version_is_the_default_and_names_round_trip() {
        assert_eq!(Reference::default(), Reference::NEWEST);
        assert_eq!(Reference::ALL.last(), Some(&Reference::NEWEST));
        for r in Reference::ALL {
            assert_eq!(r.name().parse::<Reference>(), Ok(r));
            assert_eq!(r.release().parse::<Reference>(), Ok(r));
        }
        let e = "6".parse::<Reference>().unwrap_err();
        assert_eq!(
            e.to_string(),
            "unknown reference version \"6\": rtbench supports 5.24 and 5.25"
        );
    }

    #[test]
    fn only_the_newer_version_has_the_new_semantics() {
        let old = Reference::V5_24;
        assert!(!old.defuses_control_tokens() && !old.value_parser_by() && !old.typed_coercion());
        let new = Reference::V5_25;
        assert!(new.defuses_control_tokens() && new.value_parser_by() && new.typed_coercion());
    }
}
