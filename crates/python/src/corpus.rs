use pyo3::prelude::*;
/// Adds the corpus functions.
pub(crate) fn register(_m: &Bound<'_, PyModule>) -> PyResult<()> {
    Ok(())
}
