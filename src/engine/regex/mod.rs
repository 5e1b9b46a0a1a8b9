//! Python `regex`-module patterns: parsing, matching and partial matching.
