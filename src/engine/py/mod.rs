//! Python value semantics the reference depends on: `str.strip()`, `int()`, `float()`,
//! `json.loads` / `json.dumps` and float `repr`.
