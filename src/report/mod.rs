//! Renderers for findings. `sarif`: the SARIF 2.1.0 document of `check --format sarif`.

pub mod sarif;
