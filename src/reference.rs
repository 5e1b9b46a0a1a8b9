//! Which reference version rtbench follows in this run: `--reference`, else
//! `RTBENCH_REFERENCE`, else the config file's `reference`, else the newest supported version.
//!
//! `lint` and `test` also take `all`: they then run every sample under each version and report
//! the samples whose result depends on it.

use std::fmt;

use rtbench_engine::Reference;

/// The environment variable that selects the version when `--reference` is not given.
pub(crate) const ENV: &str = "RTBENCH_REFERENCE";

/// What the user asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Selection {
    /// One version.
    One(Reference),
    /// Every supported version (`lint` and `test` only).
    All,
}

impl Selection {
    /// The versions to run, oldest first.
    pub(crate) fn versions(self) -> Vec<Reference> {
        match self {
            Selection::One(r) => vec![r],
            Selection::All => Reference::ALL.to_vec(),
        }
    }

    /// The single version in force; `All` runs as the newest where one is needed.
    pub(crate) fn single(self) -> Reference {
        match self {
            Selection::One(r) => r,
            Selection::All => Reference::NEWEST,
        }
    }
}

/// Where the selection came from (named in errors so that a mistake is easy to find).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Origin {
    Flag,
    Env,
    Config(String),
    Default,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::Flag => f.write_str("--reference"),
            Origin::Env => f.write_str(ENV),
            Origin::Config(at) => write!(f, "{at}: reference"),
            Origin::Default => f.write_str("the default"),
        }
    }
}

/// Parses a version name or `all`.
pub(crate) fn parse(text: &str, all_allowed: bool) -> Result<Selection, String> {
    if text.trim() == "all" {
        if all_allowed {
            return Ok(Selection::All);
        }
        return Err(
            "`all` is for `rtbench lint` and `rtbench test`, which compare the versions; give \
             one version here (5.24 or 5.25)"
                .into(),
        );
    }
    text.parse::<Reference>()
        .map(Selection::One)
        .map_err(|e| e.to_string())
}

/// Resolves the selection: the flag, else the environment, else the config file's value
/// (`config` gives it with where it was written, `file:line:col`), else the newest version.
pub(crate) fn resolve(
    flag: Option<&str>,
    env: Option<&str>,
    config: Option<(Reference, String)>,
    all_allowed: bool,
) -> Result<(Selection, Origin), String> {
    if let Some(text) = flag {
        return parse(text, all_allowed)
            .map(|s| (s, Origin::Flag))
            .map_err(|e| format!("--reference: {e}"));
    }
    if let Some(text) = env.filter(|t| !t.trim().is_empty()) {
        return parse(text, all_allowed)
            .map(|s| (s, Origin::Env))
            .map_err(|e| format!("{ENV}={text:?}: {e}"));
    }
    if let Some((r, at)) = config {
        return Ok((Selection::One(r), Origin::Config(at)));
    }
    Ok((Selection::One(Reference::NEWEST), Origin::Default))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flag_wins_then_the_environment_then_the_config_then_the_newest() {
        let config = || Some((Reference::V5_24, "c.toml:1:13".to_string()));
        assert_eq!(
            resolve(Some("5.24"), Some("5.25"), None, false),
            Ok((Selection::One(Reference::V5_24), Origin::Flag))
        );
        assert_eq!(
            resolve(None, Some("5.24"), None, false),
            Ok((Selection::One(Reference::V5_24), Origin::Env))
        );
        assert_eq!(
            resolve(None, Some(""), config(), false),
            Ok((
                Selection::One(Reference::V5_24),
                Origin::Config("c.toml:1:13".into())
            ))
        );
        assert_eq!(
            resolve(None, None, None, false),
            Ok((Selection::One(Reference::NEWEST), Origin::Default))
        );
    }

    #[test]
    fn all_is_only_for_the_commands_that_compare_versions() {
        assert_eq!(
            resolve(Some("all"), None, None, true).unwrap().0,
            Selection::All
        );
        let e = resolve(Some("all"), None, None, false).unwrap_err();
        assert!(e.starts_with("--reference: `all` is for"), "{e}");
        let e = resolve(None, Some("5.3"), None, false).unwrap_err();
        assert_eq!(
            e,
            "RTBENCH_REFERENCE=\"5.3\": unknown reference version \"5.3\": rtbench supports 5.24 and 5.25"
        );
        assert_eq!(Selection::All.versions(), Reference::ALL.to_vec());
    }
}
