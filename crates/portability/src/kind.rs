//! The engines other runtimes use, by name.

/// An engine other runtimes use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EngineKind {
    /// Rust's `regex` crate: no lookaround or backreferences, linear time.
    Regex,
    /// `fancy-regex`: the `regex` crate plus lookaround, backreferences and atomic groups.
    FancyRegex,
    /// ECMAScript (`regress`), as in JavaScript runtimes, with the `u` and `s` flags.
    Ecmascript,
    /// PCRE2 (C runtimes), in UTF mode with Unicode properties for `\w`, `\d`, `\b`.
    Pcre2,
}

impl EngineKind {
    /// Every engine, in report order.
    pub const ALL: [EngineKind; 4] = [
        EngineKind::Regex,
        EngineKind::FancyRegex,
        EngineKind::Ecmascript,
        EngineKind::Pcre2,
    ];

    /// The name used on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            EngineKind::Regex => "regex",
            EngineKind::FancyRegex => "fancy-regex",
            EngineKind::Ecmascript => "ecmascript",
            EngineKind::Pcre2 => "pcre2",
        }
    }

    /// The engine with this name.
    pub fn from_name(name: &str) -> Option<EngineKind> {
        EngineKind::ALL.into_iter().find(|e| e.name() == name)
    }

    /// Whether this build includes the engine (PCRE2 needs the `pcre2` feature).
    pub fn available(self) -> bool {
        self != EngineKind::Pcre2 || cfg!(feature = "pcre2")
    }

    /// The engines this build includes.
    pub fn built_in() -> Vec<EngineKind> {
        EngineKind::ALL
            .into_iter()
            .filter(|e| e.available())
            .collect()
    }
}
